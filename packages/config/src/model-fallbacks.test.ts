import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './load-config.ts';
import { resolveModelFallbacks } from './model-fallbacks.ts';
import { workerEnvSchema } from './schemas.ts';

const model = { MODEL_BASE_URL: 'http://127.0.0.1:4010/v1' };

describe('MODEL_FALLBACKS', () => {
  it('is empty by default, with a one-minute cooldown', () => {
    const config = parseConfig(workerEnvSchema, { ...model });
    expect({ fallbacks: config.MODEL_FALLBACKS, cooldown: config.MODEL_FALLBACK_COOLDOWN_MS }).toEqual({ fallbacks: [], cooldown: 60_000 });
  });

  it('parses the entries in order, trimming spaces', () => {
    const config = parseConfig(workerEnvSchema, { ...model, MODEL_FALLBACKS: 'http://a.test/v1|gpt-a|KEY_A , http://b.test/v1 | b-model | KEY_B' });
    expect(config.MODEL_FALLBACKS).toEqual([
      { baseUrl: 'http://a.test/v1', model: 'gpt-a', apiKeyEnv: 'KEY_A' },
      { baseUrl: 'http://b.test/v1', model: 'b-model', apiKeyEnv: 'KEY_B' },
    ]);
  });

  it.each([
    ['http://a.test/v1|gpt-a', /entry 1 has 2 fields, not 3/],
    ['http://a.test/v1|m|K,not-a-url|m|K', /entry 2 has a base_url that is not a URL/],
    ['http://a.test/v1||K', /entry 1 has no model/],
    ['http://a.test/v1|m|sk-123', /entry 1 has an API_KEY_ENV that is not a variable name/],
  ])('refuses %s in one line naming the entry, the value hidden', (value, message) => {
    const error = errorOf(() => parseConfig(workerEnvSchema, { ...model, MODEL_FALLBACKS: value }));
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('\n');
    expect(error.message).toContain('value hidden');
  });

  it('reads each key from the variable it names, and refuses an unset one without showing any key', () => {
    const entries = [{ baseUrl: 'http://a.test/v1', model: 'gpt-a', apiKeyEnv: 'KEY_A' }];
    expect(resolveModelFallbacks(entries, { KEY_A: 'sk-secret' })).toEqual([{ ...entries[0], apiKey: 'sk-secret' }]);
    const error = errorOf(() => resolveModelFallbacks([...entries, { baseUrl: 'http://b.test/v1', model: 'b', apiKeyEnv: 'KEY_B' }], { KEY_A: 'sk-secret' }));
    expect(error.message).toBe('Invalid configuration: MODEL_FALLBACKS entry 2 (b) names KEY_B, which is not set');
  });
});

function errorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
