import { describe, expect, it } from 'vitest';
import { estimateRequestTokens, needsCompression } from './preflight.ts';

const base = { fixedTokens: 100, sessionTokens: 0, inputTokens: 10, contextTokens: 1000, threshold: 0.8 };

describe('needsCompression', () => {
  it('counts the system prompt and tools, the session and the new input', () => {
    expect(estimateRequestTokens({ fixedTokens: 100, sessionTokens: 500, inputTokens: 10 })).toBe(610);
  });

  it('stays quiet below the threshold and compresses from it on', () => {
    expect(needsCompression({ ...base, sessionTokens: 689 })).toBe(false);
    expect(needsCompression({ ...base, sessionTokens: 690 })).toBe(true);
  });

  it('lets a long new input alone trigger compression of a short session', () => {
    expect(needsCompression({ ...base, sessionTokens: 100, inputTokens: 700 })).toBe(true);
  });
});
