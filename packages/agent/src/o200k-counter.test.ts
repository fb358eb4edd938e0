import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { countO200kTokens } from './o200k-counter.ts';

/** gpt-tokenizer refuses text that spells a special token; everything else must count the same. */
const spellsSpecialToken = (text: string) => /<\|[a-z_]+\|>/.test(text);

describe('countO200kTokens', () => {
  it('counts as gpt-tokenizer does, paragraph by paragraph, over our own docs (prose, tables, code, URLs)', () => {
    const docs = ['docs/benchmarks.md', 'docs/deploy.md', 'README.md'].map((file) => readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8'));
    const paragraphs = docs.flatMap((doc) => doc.split(/\n\n/)).filter((p) => !spellsSpecialToken(p));
    expect(paragraphs.length).toBeGreaterThan(100);
    for (const paragraph of paragraphs) expect(countO200kTokens(paragraph), paragraph.slice(0, 60)).toBe(countTokens(paragraph));
  });

  it('property: any string counts as gpt-tokenizer counts it (every script, emoji, control characters, lone surrogates)', () => {
    const units = fc.constantFrom('a', 'A', ' ', '  ', '\n', '\r\n', '\t', "'s", "'LL", 'é', 'ß', 'ش', '東', '😀', '1', '2024', '/', '.', '…', '\u0301', '\ud800', '<|');
    const arbitraries = [
      fc.string({ maxLength: 200 }),
      fc.string({ unit: 'grapheme', maxLength: 200 }),
      fc.string({ unit: 'binary', maxLength: 120 }),
      fc.array(units, { maxLength: 80 }).map((parts) => parts.join('')),
    ];
    for (const arbitrary of arbitraries) {
      fc.assert(
        fc.property(arbitrary.filter((text) => !spellsSpecialToken(text)), (text) => {
          expect(countO200kTokens(text)).toBe(countTokens(text));
        }),
        { numRuns: 1500 },
      );
    }
  });

  it('counts a message that spells a special token as the text it is, where gpt-tokenizer threw and failed the turn', () => {
    const text = 'what does <|endoftext|> mean?';
    expect(() => countTokens(text)).toThrow(/special token/);
    expect(countO200kTokens(text)).toBe(countTokens('what does <|endoftext') + countTokens('|> mean?'));
  });
});
