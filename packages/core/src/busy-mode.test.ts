import { describe, expect, it } from 'vitest';
import { planNextWork, shouldInterrupt, waitsWhileBusy } from './busy-mode.ts';

const msg = (id: number) => ({ id, text: `m${id}`, isCommand: false });
const cmd = (id: number) => ({ id, text: '/status', isCommand: true });

describe('planNextWork', () => {
  it('is idle without input', () => {
    expect(planNextWork('interrupt', [], 32)).toEqual({ kind: 'idle' });
  });

  it('runs a command at the head alone, before later messages', () => {
    expect(planNextWork('interrupt', [cmd(1), msg(2)], 32)).toEqual({ kind: 'command', event: cmd(1) });
  });

  it('queue mode runs one message per turn, in order', () => {
    expect(planNextWork('queue', [msg(1), msg(2), msg(3)], 32)).toEqual({ kind: 'turn', events: [msg(1)] });
  });

  it.each(['interrupt', 'collect', 'steer'] as const)('%s mode takes every message up to the next command', (mode) => {
    expect(planNextWork(mode, [msg(1), msg(2), cmd(3), msg(4)], 32)).toEqual({ kind: 'turn', events: [msg(1), msg(2)] });
  });

  it('queue mode keeps the parts of one long paste together', () => {
    const part = (id: number) => ({ ...msg(id), continues: true });
    expect(planNextWork('queue', [part(1), part(2), msg(3), msg(4)], 32)).toEqual({ kind: 'turn', events: [part(1), part(2), msg(3)] });
  });

  it('never takes more than the per-turn cap', () => {
    const pending = Array.from({ length: 10 }, (_, i) => msg(i + 1));
    expect(planNextWork('collect', pending, 4)).toEqual({ kind: 'turn', events: pending.slice(0, 4) });
  });
});

describe('shouldInterrupt', () => {
  it('stops the running turn for /stop in every mode, and for new input only in interrupt mode', () => {
    for (const mode of ['interrupt', 'queue', 'collect', 'steer'] as const) expect(shouldInterrupt(mode, 'stop')).toBe(true);
    expect(shouldInterrupt('interrupt', 'input')).toBe(true);
    expect(shouldInterrupt('queue', 'input')).toBe(false);
    expect(shouldInterrupt('collect', 'input')).toBe(false);
    expect(shouldInterrupt('steer', 'input')).toBe(false);
  });
});

describe('waitsWhileBusy', () => {
  it('shows input as waiting only in the modes that leave it for a later turn', () => {
    expect(['interrupt', 'queue', 'collect', 'steer'].filter((mode) => waitsWhileBusy(mode as 'queue'))).toEqual(['queue', 'collect']);
  });
});
