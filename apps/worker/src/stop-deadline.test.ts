import { describe, expect, it } from 'vitest';
import { afterDrainMs, hardStopMsFor } from './stop-deadline.ts';

describe(hardStopMsFor.name, () => {
  it('leaves the whole drain and the close after it before the forced exit', () => {
    expect(hardStopMsFor(10_000)).toBe(15_000);
    expect(hardStopMsFor(0)).toBe(15_000);
    expect(hardStopMsFor(60_000)).toBe(60_000 + afterDrainMs);
  });
});
