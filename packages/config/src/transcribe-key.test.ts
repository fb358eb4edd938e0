import { describe, expect, it } from 'vitest';
import { transcribeApiKeyOf } from './transcribe-key.ts';

describe(transcribeApiKeyOf.name, () => {
  const model = { MODEL_BASE_URL: 'https://api.openai.com/v1', MODEL_API_KEY: 'sk-model' };

  it('uses TRANSCRIBE_API_KEY when set', () => {
    expect(transcribeApiKeyOf({ ...model, TRANSCRIBE_BASE_URL: 'https://stt.example/v1', TRANSCRIBE_API_KEY: 'sk-stt' })).toBe('sk-stt');
  });

  it('falls back to MODEL_API_KEY only for the model\'s own origin', () => {
    expect(transcribeApiKeyOf({ ...model, TRANSCRIBE_BASE_URL: 'https://api.openai.com/v1' })).toBe('sk-model');
    expect(transcribeApiKeyOf({ ...model, TRANSCRIBE_BASE_URL: 'https://stt.example/v1' })).toBeUndefined();
    expect(transcribeApiKeyOf({ ...model, TRANSCRIBE_BASE_URL: 'https://api.openai.com.evil.example/v1' })).toBeUndefined();
    expect(transcribeApiKeyOf({ ...model, TRANSCRIBE_BASE_URL: 'http://api.openai.com/v1' })).toBeUndefined();
  });
});
