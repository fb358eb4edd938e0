import type { z } from 'zod';

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Parses `env` with `schema`. On failure throws a ConfigError whose message is
 * one line naming each bad variable and what is wrong with it.
 */
export function parseConfig<S extends z.ZodTypeAny>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data as z.output<S>;
  const problems = result.error.issues.map((issue) => {
    const name = issue.path.join('.') || 'environment';
    const raw = typeof issue.path[0] === 'string' ? env[issue.path[0]] : undefined;
    const shown = raw === undefined ? 'unset' : isSecretName(name) ? 'value hidden' : JSON.stringify(raw.slice(0, 60));
    return `${name} ${issue.message} (${shown})`;
  });
  throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
}

function isSecretName(name: string): boolean {
  return /TOKEN|SECRET|KEY|PASSWORD|URL/.test(name);
}

/**
 * Entry-point helper: parse or print the one-line reason and exit 1.
 * Only process entry points call this; libraries use parseConfig.
 */
export function loadConfigOrExit<S extends z.ZodTypeAny>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  try {
    return parseConfig(schema, env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
