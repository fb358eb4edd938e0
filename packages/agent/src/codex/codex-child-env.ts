/**
 * The environment of a Codex child (docs/codex.md, "What a child gets"): an
 * allow-list, never the worker's own environment. The worker holds the
 * database and Redis URLs, every bot token and the admin token, and a chat
 * user of a Codex conversation can ask the child to run `env` (issue 30,
 * finding 1); Codex's own filter only hides names with KEY/SECRET/TOKEN in
 * them, so DATABASE_URL with its password went through.
 */
import { isWorkerSecretName } from '@switchboard/core';
import { readModelProvider, readTomlStrings } from './codex-config-toml.ts';

/** Codex's own default provider (`openai`) reads its key from this variable. */
export const defaultProviderKeyName = 'OPENAI_API_KEY';

export interface CodexChildEnvInput {
  /** The worker's environment, read only for the names allowed below. */
  source: Readonly<Record<string, string | undefined>>;
  /** The conversation's own HOME; CODEX_HOME and TMPDIR sit inside it (the worker creates them, 0700). */
  home: string;
  codexHome: string;
  tmpDir: string;
  /** The one variable holding the model provider's key (readProviderKeyName), passed only if set. */
  credentialName: string | null;
  /** CODEX_ENV_PASSTHROUGH: further names an operator chose (a proxy, a CA bundle); worker secrets are dropped. */
  passthrough: readonly string[];
}

const fallbackPath = '/usr/local/bin:/usr/bin:/bin';

/**
 * The child's whole environment: PATH, LANG and LC_*, TERM if set, the
 * conversation's HOME, CODEX_HOME and TMPDIR, the provider credential and
 * what the operator passed through; nothing else of the worker's.
 */
export function buildCodexChildEnv(input: CodexChildEnvInput): Record<string, string> {
  const names = [...input.passthrough, ...(input.credentialName ? [input.credentialName] : [])];
  // Set last: a passed-through HOME or TMPDIR must not point a conversation back at shared directories.
  return { ...pickAllowedEnv(input.source, names), HOME: input.home, CODEX_HOME: input.codexHome, TMPDIR: input.tmpDir };
}

/** PATH, LANG, LC_*, TERM and the given names that are set, never a worker secret. */
export function pickAllowedEnv(source: Readonly<Record<string, string | undefined>>, names: readonly string[] = []): Record<string, string> {
  const env: Record<string, string> = { PATH: source.PATH || fallbackPath };
  const copied = [...Object.keys(source).filter((name) => name === 'LANG' || /^LC_[A-Z_]+$/.test(name)), 'TERM', ...names];
  for (const name of copied) {
    const value = source[name];
    if (value !== undefined && !isWorkerSecretName(name)) env[name] = value;
  }
  return env;
}

/**
 * The variable the operator's Codex configuration reads the model provider's
 * key from: `env_key` of the provider `model_provider` names (at the top of
 * config.toml, or in the `[profiles.<name>]` that `profile` selects), else
 * OPENAI_API_KEY for Codex's default provider; null when the chosen provider
 * names no key (a local one).
 */
export function readProviderKeyName(configToml: string | null): string | null {
  const tables = readTomlStrings(configToml ?? '');
  const provider = readModelProvider(tables);
  const envKey = tables.get(`model_providers.${provider}`)?.get('env_key');
  if (envKey) return envKey;
  return provider === 'openai' ? defaultProviderKeyName : null;
}
