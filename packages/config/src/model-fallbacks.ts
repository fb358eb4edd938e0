import { z } from 'zod';
import { ConfigError } from './load-config.ts';

/** One further OpenAI-compatible endpoint of MODEL_FALLBACKS, before its key is read. */
export interface ModelFallbackEntry {
  baseUrl: string;
  model: string;
  /** The name of the variable that holds the key (never the key: MODEL_FALLBACKS itself is not secret). */
  apiKeyEnv: string;
}

/** A fallback endpoint with its key read from the environment. */
export interface ModelFallbackEndpoint extends ModelFallbackEntry {
  apiKey: string;
}

const envName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * MODEL_FALLBACKS: comma-separated `base_url|model|API_KEY_ENV`, in the order
 * they are tried after the primary (MODEL_BASE_URL, MODEL_NAME). A bad entry
 * fails start-up with one line naming it by position.
 */
export const modelFallbacks = z
  .string()
  .default('')
  .transform((raw, ctx): ModelFallbackEntry[] => {
    const entries: ModelFallbackEntry[] = [];
    const parts = raw.split(',').map((part) => part.trim()).filter((part) => part !== '');
    parts.forEach((part, i) => {
      const problem = findEntryProblem(part);
      if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `entry ${i + 1} ${problem} (each entry: base_url|model|API_KEY_ENV)` });
      else {
        const [baseUrl, model, apiKeyEnv] = part.split('|').map((field) => field.trim()) as [string, string, string];
        entries.push({ baseUrl, model, apiKeyEnv });
      }
    });
    return entries;
  });

function findEntryProblem(entry: string): string | undefined {
  const fields = entry.split('|').map((field) => field.trim());
  if (fields.length !== 3) return `has ${fields.length} field${fields.length === 1 ? '' : 's'}, not 3`;
  const [baseUrl, model, apiKeyEnv] = fields as [string, string, string];
  if (!z.string().url().safeParse(baseUrl).success) return 'has a base_url that is not a URL';
  if (model === '') return 'has no model';
  if (!envName.test(apiKeyEnv)) return 'has an API_KEY_ENV that is not a variable name';
  return undefined;
}

/**
 * Reads each fallback's key from `env`. The variable must be set (an empty
 * value is allowed: a local endpoint may need none); an unset one fails
 * start-up naming the entry and the variable, never a value.
 */
export function resolveModelFallbacks(entries: readonly ModelFallbackEntry[], env: NodeJS.ProcessEnv): ModelFallbackEndpoint[] {
  return entries.map((entry, i) => {
    const apiKey = env[entry.apiKeyEnv];
    if (apiKey === undefined) throw new ConfigError(`Invalid configuration: MODEL_FALLBACKS entry ${i + 1} (${entry.model}) names ${entry.apiKeyEnv}, which is not set`);
    return { ...entry, apiKey };
  });
}
