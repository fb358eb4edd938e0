import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isOverQueueCap, queueCapFor } from './queue-cap.ts';

describe('the queued-input cap', () => {
  it('refuses input once the cap is waiting, never before', () => {
    expect(isOverQueueCap(31, queueCapFor('input', 32))).toBe(false);
    expect(isOverQueueCap(32, queueCapFor('input', 32))).toBe(true);
    expect(isOverQueueCap(40, queueCapFor('none', 32))).toBe(true);
  });

  it('never refuses /stop, however much waits', () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 1000 }), (waiting, max) => {
        expect(isOverQueueCap(waiting, queueCapFor('stop', max))).toBe(false);
      }),
    );;
  });
});
