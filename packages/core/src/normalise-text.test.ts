import { describe, expect, it } from 'vitest';
import { normaliseStringValues, normaliseText } from './normalise-text.ts';

describe('normaliseText', () => {
  it('removes U+0000 wherever it appears', () => {
    expect(normaliseText('\u0000a\u0000b\u0000')).toBe('ab');
  });

  it('replaces lone surrogates with U+FFFD and keeps valid pairs', () => {
    expect(normaliseText('x\uD800y\uDC00z')).toBe('x\uFFFDy\uFFFDz');
    expect(normaliseText('😀')).toBe('😀');
  });

  it('leaves ordinary text unchanged', () => {
    const text = 'héllo שלום 𝄞 \t\n';
    expect(normaliseText(text)).toBe(text);
  });

  it('makes any string safe for encodeURIComponent', () => {
    expect(() => encodeURIComponent(normaliseText('C\uD800'))).not.toThrow();
  });

  it('normalises only the string values of a record', () => {
    expect(normaliseStringValues({ channel: 'C\u0000\uDFFF', n: 1 })).toEqual({ channel: 'C\uFFFD', n: 1 });
  });
});
