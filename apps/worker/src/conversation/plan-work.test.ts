import { describe, expect, it } from 'vitest';
import type { InboundEventRow } from '@switchboard/db';
import { endsAfterDelivery, planWork, steerableInput, waitingInput } from './plan-work.ts';

const row = (id: number, text: string, command: string | null = 'text'): InboundEventRow => ({
  id, platform: 'telegram', accountId: 'bot', eventId: `e${id}`, conversationId: 1, userId: 'u1', text, command,
  replyTarget: {}, attachments: null, status: 'pending', turnId: null, commandAppliedAt: null, receivedAt: new Date(0),
});

describe('planWork (the plan of a pass)', () => {
  it('runs a command at the head alone, read from the stored column', () => {
    expect(planWork('interrupt', 'telegram', [row(1, 'x', 'status'), row(2, 'hi')], 32)).toMatchObject({ kind: 'command', event: { id: 1, chatCommand: { name: 'status' } } });
  });

  it('takes input up to the next command, stored or (for a legacy row) parsed', () => {
    const planned = planWork('collect', 'telegram', [row(1, 'a'), row(2, 'b'), row(3, '/stop', null), row(4, 'c')], 32);
    expect(planned.kind === 'turn' && planned.events.map((e) => e.id)).toEqual([1, 2]);
  });

  it('gives a /word stored as text to the model', () => {
    const planned = planWork('queue', 'telegram', [row(1, '/stop', 'text')], 32);
    expect(planned).toMatchObject({ kind: 'turn', events: [{ id: 1, isCommand: false }] });
  });

  it('is idle without input', () => {
    expect(planWork('queue', 'telegram', [], 32)).toEqual({ kind: 'idle' });
  });
});

describe('steerableInput', () => {
  it('joins what came after the taken input, up to the next command', () => {
    const pending = [row(1, 'taken'), row(2, 'more'), row(3, 'and more'), row(4, 'x', 'stop'), row(5, 'after the stop')];
    expect(steerableInput(pending, 1).map((e) => e.id)).toEqual([2, 3]);
    expect(steerableInput([row(2, '/busy queue', null), row(3, 'later')], 1)).toEqual([]);
  });
});

describe('waitingInput', () => {
  it('is every message after the taken input, commands left out (they leave no reaction)', () => {
    const pending = [row(1, 'taken'), row(2, 'more'), row(3, 'x', 'status'), row(4, 'after the command'), row(5, '/help', null)];
    expect(waitingInput(pending, 1).map((e) => e.id)).toEqual([2, 4]);
    expect(waitingInput(pending, 4)).toEqual([]);
  });
});

describe('endsAfterDelivery', () => {
  const turn = { kind: 'turn' as const, events: [{ id: 1, text: 'a', isCommand: false }] };

  it('ends the drain after a turn that took all it read, delivered everything and was not stopped', () => {
    expect(endsAfterDelivery({ work: turn, pendingRead: 1, delivery: 'sent', stopped: false })).toBe(true);
  });

  it('reads again after a stop (its /stop waits), input left behind, a delivery not done, or a command', () => {
    expect(endsAfterDelivery({ work: turn, pendingRead: 1, delivery: 'sent', stopped: true })).toBe(false);
    expect(endsAfterDelivery({ work: turn, pendingRead: 2, delivery: 'sent', stopped: false })).toBe(false);
    expect(endsAfterDelivery({ work: turn, pendingRead: 1, delivery: 'later', stopped: false })).toBe(false);
    expect(endsAfterDelivery({ work: { kind: 'command', event: { id: 1, text: '/help', isCommand: true } }, pendingRead: 1, delivery: 'sent', stopped: false })).toBe(false);
  });
});
