import { describe, expect, it } from 'vitest';
import { isNearLimitPart } from './paste-merge.ts';

describe('isNearLimitPart', () => {
  it('recognises a part that fills the platform limit', () => {
    expect(isNearLimitPart('telegram', 'x'.repeat(4096))).toBe(true);
    expect(isNearLimitPart('discord', 'x'.repeat(1900))).toBe(true);
    expect(isNearLimitPart('telegram', 'x'.repeat(1900))).toBe(false);
    expect(isNearLimitPart('slack', 'short')).toBe(false);
  });
});
