import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from './load-config.ts';

/** One entry of HOOKS_FILE (DESIGN §3): who may call `POST /hooks/{name}` and the turn it starts. */
export interface HookConfig {
  name: string;
  /** The HMAC-SHA256 key of `X-Switchboard-Signature`. Never logged, never in an error message. */
  secret: string;
  /** An existing conversation (its platform and chat): where the turn runs and the reply goes. */
  conversationId: number;
  /** The user's text of the turn; `{{body}}` is replaced by the request body as text. */
  prompt: string;
}

/** A URL path segment of its own, short enough for the dedupe key. */
const hookName = /^[A-Za-z0-9_-]{1,64}$/;

// Every message is written here: zod's own messages for some checks quote the value received, and a value may be the secret.
const hookSchema = z
  .object({
    secret: z.string({ required_error: 'is required', invalid_type_error: 'must be a string' }).min(16, 'must be at least 16 characters'),
    conversationId: z
      .number({ required_error: 'is required', invalid_type_error: 'must be a number (a conversation id of the admin API)' })
      .int('must be a whole number')
      .positive('must be positive'),
    prompt: z
      .string({ required_error: 'is required', invalid_type_error: 'must be a string' })
      .min(1, 'must not be empty')
      .max(100_000, 'must be at most 100000 characters'),
  })
  .strict();

/**
 * Reads and checks HOOKS_FILE: a JSON object `{"<name>": {"secret",
 * "conversationId", "prompt"}}`. Throws a ConfigError whose message has one
 * line per bad entry (every one of them), naming the hook and the field but
 * never a value, so a secret can never reach the terminal or a log.
 */
export function loadHooksFile(path: string): HookConfig[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const reason = error instanceof SyntaxError ? 'is not valid JSON' : 'cannot be read';
    throw new ConfigError(`Invalid configuration: HOOKS_FILE ${reason} (${path})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`Invalid configuration: HOOKS_FILE must hold a JSON object of hooks by name (${path})`);
  }
  const hooks: HookConfig[] = [];
  const problems: string[] = [];
  for (const [name, entry] of Object.entries(parsed)) {
    const shownName = JSON.stringify(name.slice(0, 64));
    if (!hookName.test(name)) problems.push(`hook ${shownName}: the name must be 1-64 characters of A-Z a-z 0-9 _ -`);
    const result = hookSchema.safeParse(entry);
    if (!result.success) problems.push(...result.error.issues.map((issue) => `hook ${shownName}: ${describeIssue(issue)}`));
    else if (hookName.test(name)) hooks.push({ name, ...result.data });
  }
  if (problems.length > 0) throw new ConfigError(problems.map((problem) => `Invalid configuration: HOOKS_FILE ${problem}`).join('\n'));
  return hooks;
}

function describeIssue(issue: z.ZodIssue): string {
  if (issue.code === z.ZodIssueCode.unrecognized_keys) return `unknown field ${issue.keys.map((key) => JSON.stringify(key.slice(0, 64))).join(', ')} (fields: secret, conversationId, prompt)`;
  if (issue.path.length === 0) return 'must be an object {"secret", "conversationId", "prompt"}';
  return `${issue.path.join('.')} ${issue.message}`;
}
