import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { automaticCompressionGate, hasEnoughToSummarise, judgeCompression, judgeCompressionFailure } from './compression-rules.ts';

describe('judgeCompression', () => {
  it('counts a summary that leaves under 90 % of the tokens as shrinking, and clears the failures', () => {
    expect(judgeCompression({ summaryTokens: 100, keptTokens: 799, sessionTokens: 1000, failuresBefore: 1 })).toEqual({ shrunk: true, compressFailures: 0, blocked: false });
  });

  it('counts one that leaves 90 % or more as a failure, and blocks at the second in a row', () => {
    expect(judgeCompression({ summaryTokens: 100, keptTokens: 800, sessionTokens: 1000, failuresBefore: 0 })).toEqual({ shrunk: false, compressFailures: 1, blocked: false });
    expect(judgeCompression({ summaryTokens: 300, keptTokens: 800, sessionTokens: 1000, failuresBefore: 1 })).toEqual({ shrunk: false, compressFailures: 2, blocked: true });
  });

  it('never blocks a compression that shrank, and always counts one more failure for one that did not', () => {
    fc.assert(
      fc.property(fc.nat(10_000), fc.nat(10_000), fc.nat(20_000), fc.nat(10), (summaryTokens, keptTokens, sessionTokens, failuresBefore) => {
        const verdict = judgeCompression({ summaryTokens, keptTokens, sessionTokens, failuresBefore });
        if (verdict.shrunk) expect(verdict).toEqual({ shrunk: true, compressFailures: 0, blocked: false });
        else expect(verdict.compressFailures).toBe(failuresBefore + 1);
      }),
    );
  });
});

describe('judgeCompressionFailure', () => {
  const policy = { backoffMs: 30_000, maxAttempts: 3 };

  it('backs off doubling per earlier failure, at most 2^6 times the base, and blocks at maxAttempts', () => {
    expect(judgeCompressionFailure({ failures: 0, blocked: false }, policy)).toEqual({ failures: 1, blocked: false, retryInMs: 30_000 });
    expect(judgeCompressionFailure({ failures: 1, blocked: false }, policy)).toEqual({ failures: 2, blocked: false, retryInMs: 60_000 });
    expect(judgeCompressionFailure({ failures: 2, blocked: false }, policy)).toEqual({ failures: 3, blocked: true, retryInMs: 120_000 });
    expect(judgeCompressionFailure({ failures: 9, blocked: false }, { ...policy, maxAttempts: 20 }).retryInMs).toBe(30_000 * 64);
  });

  it('never unblocks a blocked session', () => {
    expect(judgeCompressionFailure({ failures: 0, blocked: true }, policy).blocked).toBe(true);
  });
});

describe('automaticCompressionGate', () => {
  it('holds a blocked session and one in backoff, unless a person asks', () => {
    expect(automaticCompressionGate({ blocked: true, nextCompressAtMs: null }, 1000, false)).toBe('blocked');
    expect(automaticCompressionGate({ blocked: false, nextCompressAtMs: 2000 }, 1000, false)).toBe('backoff');
    expect(automaticCompressionGate({ blocked: false, nextCompressAtMs: 1000 }, 1000, false)).toBe('run');
    expect(automaticCompressionGate({ blocked: true, nextCompressAtMs: 2000 }, 1000, true)).toBe('run');
  });
});

describe('hasEnoughToSummarise', () => {
  it('asks for at least the share a compression must cut, in messages not yet summarised', () => {
    expect(hasEnoughToSummarise(100, 1000)).toBe(true);
    expect(hasEnoughToSummarise(99, 1000)).toBe(false);
    expect(hasEnoughToSummarise(0, 0)).toBe(false);
  });
});
