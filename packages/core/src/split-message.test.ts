import { describe, expect, it } from 'vitest';
import { splitMessage } from './split-message.ts';

describe('splitMessage', () => {
  it('returns a short reply unchanged', () => {
    expect(splitMessage('hello there', 4096)).toEqual(['hello there']);
  });

  it('splits a 5,000-character reply into two parts within the limit, keeping every word in order', () => {
    const words = Array.from({ length: 1000 }, (_, i) => `word${i}`);
    const text = words.join(' ');
    expect(text.length).toBeGreaterThan(5000);
    const parts = splitMessage(text, 4096);
    expect(parts).toHaveLength(2);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(4096);
    expect(parts.join(' ').split(' ')).toEqual(words);
  });

  it('prefers a paragraph break over a line break or a space', () => {
    const first = 'a'.repeat(60);
    const text = `${first}\n\n${'b '.repeat(40)}`;
    const parts = splitMessage(text, 80);
    expect(parts[0]).toBe(first);
    expect(parts[1]?.startsWith('b b')).toBe(true);
  });

  it('never leaves a code fence open: closes it and reopens it with the same language', () => {
    const code = Array.from({ length: 30 }, (_, i) => `const line${i} = ${i};`).join('\n');
    const text = `Here is code:\n\`\`\`ts\n${code}\n\`\`\`\nDone.`;
    const parts = splitMessage(text, 200);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(200);
      const fences = part.split('\n').filter((line) => line.trim().startsWith('```'));
      expect(fences.length % 2).toBe(0);
    }
    expect(parts[1]?.startsWith('```ts\n')).toBe(true);
    const rejoined = parts.join('\n');
    for (let i = 0; i < 30; i++) expect(rejoined).toContain(`const line${i} = ${i};`);
  });

  it('hard-cuts a single word longer than the limit without splitting a surrogate pair', () => {
    const text = '😀'.repeat(100);
    const parts = splitMessage(text, 51);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(51);
      expect(part).not.toMatch(/[\ud800-\udbff]$/);
    }
    expect(parts.join('')).toBe(text);
  });

  it('rejects a nonsensical limit', () => {
    expect(() => splitMessage('x', 3)).toThrow(RangeError);
  });

  it('splits again, smaller, a part that does not fit once rendered, keeping fences whole', () => {
    const text = `intro\n\`\`\`ts\n${Array.from({ length: 40 }, (_, i) => `x${i} & y`).join('\n')}\n\`\`\``;
    // A stand-in for a platform whose markup turns each & into five characters.
    const fits = (part: string) => part.replace(/&/g, '&amp;').length <= 200;
    const parts = splitMessage(text, 200, fits);
    expect(parts.length).toBeGreaterThan(splitMessage(text, 200).length);
    for (const part of parts) {
      expect(fits(part)).toBe(true);
      expect(part.split('\n').filter((line) => line.trim().startsWith('```')).length % 2).toBe(0);
    }
  });
});
