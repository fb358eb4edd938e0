import { describe, expect, it } from 'vitest';
import { faultKinds, generateFaultSchedule, profiles } from './fault-schedule.ts';

const topology = { gateways: 2, workers: 2 };

describe(generateFaultSchedule.name, () => {
  it('gives the same schedule for the same seed, and another for another seed', () => {
    const first = generateFaultSchedule(7, profiles.long, topology);
    expect(generateFaultSchedule(7, profiles.long, topology)).toEqual(first);
    expect(generateFaultSchedule(8, profiles.long, topology)).not.toEqual(first);
  });

  it('orders faults in time, inside the run, each ending before the next slot', () => {
    for (const profile of [profiles.short, profiles.long]) {
      const faults = generateFaultSchedule(3, profile, topology);
      const slot = (profile.durationS * 1000 - profile.leadInMs - profile.tailMs) / profile.faults;
      faults.forEach((fault, i) => {
        expect(fault.atMs).toBeGreaterThanOrEqual(Math.floor(profile.leadInMs + i * slot));
        expect(fault.atMs).toBeLessThan(profile.leadInMs + (i + 1) * slot);
        expect(fault.durationMs).toBeGreaterThan(0);
      });
      expect(faults.map((f) => f.atMs)).toEqual([...faults.map((f) => f.atMs)].sort((a, b) => a - b));
    }
  });

  it('short: every kind it lists, in order; long: at least 100 faults of every kind', () => {
    const short = generateFaultSchedule(1, profiles.short, topology);
    expect(short.map((f) => f.kind)).toEqual(profiles.short.kinds.slice(0, profiles.short.faults));
    const long = generateFaultSchedule(1, profiles.long, topology);
    expect(long.length).toBeGreaterThanOrEqual(100);
    expect(profiles.long.durationS).toBeGreaterThanOrEqual(600);
    expect(new Set(long.map((f) => f.kind)).size).toBeGreaterThanOrEqual(faultKinds.length - 1);
  });

  it('aims process faults at processes that exist', () => {
    const faults = generateFaultSchedule(11, profiles.long, { gateways: 1, workers: 3 });
    for (const fault of faults.filter((f) => f.kind === 'worker-kill')) expect(fault.target).toMatch(/^worker-[0-2]$/);
    for (const fault of faults.filter((f) => f.kind === 'gateway-kill')) expect(fault.target).toBe('gateway-0');
  });
});
