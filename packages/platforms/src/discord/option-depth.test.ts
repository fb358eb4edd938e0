import { describe, expect, it } from 'vitest';
import { PlatformError } from '../errors.ts';
import { assertOptionDepth, maxOptionDepth } from './option-depth.ts';

const nest = (levels: number): unknown[] => {
  let options: unknown[] = [{ name: 'leaf', type: 3, value: 'x' }];
  for (let i = 1; i < levels; i++) options = [{ name: 'g', type: 2, options }];
  return options;
};

describe('assertOptionDepth', () => {
  it('accepts up to Discord’s three levels and bodies without options', () => {
    expect(maxOptionDepth).toBe(3);
    for (let levels = 1; levels <= 3; levels++) expect(() => assertOptionDepth({ data: { options: nest(levels) } })).not.toThrow();
    for (const body of [null, 'x', {}, { data: null }, { data: { options: 'not an array' } }]) expect(() => assertOptionDepth(body)).not.toThrow();
  });

  it('refuses a fourth level, and a hundred thousand, with INVALID_PAYLOAD and without overflowing', () => {
    for (const levels of [4, 100_000]) {
      let thrown: unknown;
      try {
        assertOptionDepth({ data: { options: nest(levels) } });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(PlatformError);
      expect((thrown as PlatformError).code).toBe('INVALID_PAYLOAD');
    }
  });
});
