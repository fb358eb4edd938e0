import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { countInPieces, estimateMessageTokens, estimateMessageTokensPaced } from './estimate-tokens.ts';

describe('estimateMessageTokens', () => {
  it('counts the text and its extra with the chat framing', () => {
    expect(estimateMessageTokens('hello world')).toBe(countTokens('hello world') + 4);
    expect(estimateMessageTokens('hi', '{"a":1}')).toBe(countTokens('hi') + countTokens('{"a":1}') + 4);
  });

  it('counts a message that spells a special token as text instead of throwing (gpt-tokenizer refused `<|endoftext|>`)', () => {
    expect(estimateMessageTokens('what does <|endoftext|> mean?')).toBe(countTokens('what does <|endoftext') + countTokens('|> mean?') + 4);
  });

  it('counts a 40,000-character run with no break (Slack’s longest message) in well under a second', () => {
    // Issue 17: in one call this took 3 s for `a` and 14 s for `ش`, on the worker's event loop.
    for (const unit of ['a', 'ش', '😀']) {
      const text = unit.repeat(40_000 / unit.length);
      const startedAt = performance.now();
      const tokens = estimateMessageTokens(text);
      expect(performance.now() - startedAt, unit).toBeLessThan(1000);
      expect(tokens, unit).toBeGreaterThan(1000);
    }
  });
});

describe('countInPieces', () => {
  it('property: ordinary text (words, spaces, line breaks) counts exactly as in one call', () => {
    const word = fc.oneof(fc.constantFrom('the', 'quick', 'fox', 'über', 'naïve', '3.14', 'https://example.com/a?b=c', '😀', 'مرحبا', '東京'), fc.string({ minLength: 1, maxLength: 12 }).filter((w) => !/\s/.test(w)));
    const separator = fc.constantFrom(' ', ' ', ' ', '\n', '  ', ', ', '. ');
    const text = fc.array(fc.tuple(word, separator), { minLength: 50, maxLength: 400 }).map((parts) => parts.map(([w, s]) => w + s).join(''));
    fc.assert(
      fc.property(text, (t) => {
        expect(countInPieces(t)).toBe(countTokens(t));
      }),
      { numRuns: 40 },
    );
  });

  it('never splits a surrogate pair, so a long run of 4-byte characters counts as many tokens as characters', () => {
    const text = '😀'.repeat(5000);
    expect(countInPieces(text)).toBe(countTokens('😀'.repeat(100)) * 50);
  });
});

describe('estimateMessageTokensPaced', () => {
  it('counts exactly what estimateMessageTokens counts, pausing once per slice of a long text (issue 30, finding 3)', async () => {
    const text = 'the quick brown fox jumps over the lazy dog. '.repeat(4_000);
    let pauses = 0;
    const counted = await estimateMessageTokensPaced(text, async () => void (pauses += 1), 32_768);
    expect(counted).toBe(estimateMessageTokens(text));
    expect(pauses).toBe(Math.floor(text.length / 32_768));
    let shortPauses = 0;
    expect(await estimateMessageTokensPaced('hello there', async () => void (shortPauses += 1))).toBe(estimateMessageTokens('hello there'));
    expect(shortPauses).toBe(0);
  });
});
