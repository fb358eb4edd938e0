import { isRetryableCode, type ErrorCodeOf } from '@switchboard/core';
import { ZodEffects, ZodObject, type z } from 'zod';

export class ConfigError extends Error {
  readonly code: Extract<ErrorCodeOf<'config'>, 'CONFIG_INVALID'> = 'CONFIG_INVALID';
  /** From the catalog (docs/errors.md): false, the same environment fails the same way. */
  readonly retryable = isRetryableCode(this.code);
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Parses `env` with `schema`. On failure throws a ConfigError whose message is
 * one line naming each bad variable and what is wrong with it: every one, the
 * cross-variable rules included (see findRuleIssues).
 */
export function parseConfig<S extends z.ZodTypeAny>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data as z.output<S>;
  const issues = [...result.error.issues, ...findRuleIssues(schema, env, result.error.issues)];
  const problems = issues.map((issue) => {
    const name = issue.path.join('.') || 'environment';
    const raw = typeof issue.path[0] === 'string' ? env[issue.path[0]] : undefined;
    const shown = raw === undefined ? 'unset' : isSecretName(name) ? 'value hidden' : JSON.stringify(raw.slice(0, 60));
    return `${name} ${issue.message} (${shown})`;
  });
  throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
}

/**
 * zod runs an object's refinements (the rules across variables, such as "the
 * webhook secret is required with a Telegram token") only when every field
 * parsed, so a bad PORT would hide them until PORT was fixed, one restart per
 * problem. Here they run on the variables that did parse (defaults for the
 * rest), and only issues about other variables than the ones already
 * reported are added. A rule that cannot judge without a bad variable throws
 * or stays silent; either way it adds nothing.
 */
function findRuleIssues(schema: z.ZodTypeAny, env: NodeJS.ProcessEnv, reported: z.ZodIssue[]): z.ZodIssue[] {
  const rules: Array<(value: unknown, ctx: z.RefinementCtx) => unknown> = [];
  let inner = schema;
  while (inner instanceof ZodEffects) {
    const effect = (inner as ZodEffects<z.ZodTypeAny>)._def.effect;
    if (effect.type === 'refinement') rules.unshift(effect.refinement);
    inner = (inner as ZodEffects<z.ZodTypeAny>).innerType();
  }
  if (rules.length === 0 || !(inner instanceof ZodObject)) return [];
  const parsed: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(inner.shape as Record<string, z.ZodTypeAny>)) {
    const value = field.safeParse(env[name]);
    if (value.success) parsed[name] = value.data;
  }
  const reportedNames = new Set(reported.map((issue) => String(issue.path[0] ?? '')));
  const found: z.ZodIssue[] = [];
  const ctx = {
    path: [],
    addIssue: (issue: z.IssueData) => found.push({ ...issue, path: issue.path ?? [], message: issue.message ?? 'is invalid' } as z.ZodIssue),
  };
  for (const rule of rules) {
    try {
      rule(parsed, ctx);
    } catch {
      // The rule needed a variable that did not parse; that variable is already reported.
    }
  }
  return found.filter((issue) => !reportedNames.has(String(issue.path[0] ?? '')));
}

function isSecretName(name: string): boolean {
  // MODEL_FALLBACKS holds URLs, which may carry credentials.
  return /TOKEN|SECRET|KEY|PASSWORD|URL|FALLBACKS/.test(name);
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
