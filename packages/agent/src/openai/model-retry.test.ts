import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { describe, expect, it } from 'vitest';
import { findRetryDelayMs, readRetryAfterMs } from './model-retry.ts';

const answered = (status: number, headers: Record<string, string> = {}) => APIError.generate(status, { message: 'x' }, undefined, new Headers(headers));
const policy = { maxRetries: 2, maxWaitMs: 30_000 };

describe('readRetryAfterMs', () => {
  it('reads retry-after-ms first, then Retry-After in seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-24T03:00:00Z');
    expect(readRetryAfterMs(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }), now)).toBe(1500);
    expect(readRetryAfterMs(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(readRetryAfterMs(new Headers({ 'retry-after': 'Tue, 24 Nov 2026 03:00:05 GMT' }), now)).toBe(5000);
    // A date already past means "now", not a negative wait.
    expect(readRetryAfterMs(new Headers({ 'retry-after': 'Tue, 24 Nov 2026 02:59:00 GMT' }), now)).toBe(0);
  });

  it('names no wait for a missing or unreadable header', () => {
    expect(readRetryAfterMs(undefined)).toBeUndefined();
    expect(readRetryAfterMs(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(readRetryAfterMs(new Headers({ 'retry-after-ms': '-5' }))).toBeUndefined();
  });
});

describe('findRetryDelayMs', () => {
  it('retries 408, 409, 429, 5xx and lost connections, and nothing else', () => {
    for (const status of [408, 409, 429, 500, 502, 503]) expect(findRetryDelayMs(answered(status), 0, policy)).toBeGreaterThan(0);
    for (const status of [400, 401, 403, 404, 422]) expect(findRetryDelayMs(answered(status), 0, policy)).toBeUndefined();
    expect(findRetryDelayMs(new APIConnectionError({ message: 'reset' }), 0, policy)).toBeGreaterThan(0);
    expect(findRetryDelayMs(new APIConnectionTimeoutError(), 0, policy)).toBeUndefined();
    expect(findRetryDelayMs(new APIUserAbortError(), 0, policy)).toBeUndefined();
    expect(findRetryDelayMs(new Error('bug'), 0, policy)).toBeUndefined();
  });

  it('obeys x-should-retry over the status', () => {
    expect(findRetryDelayMs(answered(400, { 'x-should-retry': 'true' }), 0, policy)).toBeGreaterThan(0);
    expect(findRetryDelayMs(answered(503, { 'x-should-retry': 'false' }), 0, policy)).toBeUndefined();
  });

  it('waits what the model asks, backs off with jitter otherwise, and stops after maxRetries', () => {
    expect(findRetryDelayMs(answered(429, { 'retry-after': '3' }), 0, policy)).toBe(3000);
    const backoff = findRetryDelayMs(answered(503), 1, policy) ?? 0;
    expect(backoff).toBeGreaterThanOrEqual(750);
    expect(backoff).toBeLessThanOrEqual(1000);
    expect(findRetryDelayMs(answered(503), 2, policy)).toBeUndefined();
  });

  it('gives up at once when the model asks for longer than maxWaitMs', () => {
    expect(findRetryDelayMs(answered(429, { 'retry-after': '31' }), 0, policy)).toBeUndefined();
    expect(findRetryDelayMs(answered(429, { 'retry-after': '30' }), 0, policy)).toBe(30_000);
  });
});
