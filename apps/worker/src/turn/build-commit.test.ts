import { describe, expect, it } from 'vitest';
import type { ConversationRow, InboundEventRow, SessionRow } from '@switchboard/db';
import { initialTurnState, reduceActiveTurn, type ActiveTurnEvent, type ActiveTurnState } from './active-turn.ts';
import { buildCommit, type CommitInputs } from './build-commit.ts';
import { stoppedExecution } from './execute-turn.ts';
import { notices } from './turn-notices.ts';
import type { ExecutedTurn } from './turn.ts';

// The commit of a turn without a database: what it stores and sends.

const conversation = { id: 7, platform: 'telegram' } as ConversationRow;
const session = { id: 70 } as SessionRow;
const event = (id: number, text: string) => ({ id, text, replyTarget: { chat_id: 7, reply_to: id } }) as unknown as InboundEventRow;

function stateAfter(...events: ActiveTurnEvent[]): ActiveTurnState {
  return events.reduce((state, e) => reduceActiveTurn(state, e).state, initialTurnState('queue'));
}

function inputs(executed: ExecutedTurn, overrides: Partial<CommitInputs> = {}): CommitInputs {
  return {
    prepared: { conversation, session, compressed: false, suspendedNotice: null },
    turnId: 5,
    executed,
    input: [event(11, 'first'), event(12, 'second')],
    active: { state: stateAfter({ kind: 'taken', upTo: 12 }) },
    claimId: 'claim',
    ...overrides,
  };
}

const shape = { messageLimit: 4096, compressionNotice: false };

describe('buildCommit', () => {
  it('stores the input, then what the turn produced, consumes steered input too, and replies to the last message', () => {
    const commit = buildCommit(
      inputs({ status: 'completed', replyText: 'the answer', entries: [{ role: 'user', content: 'steered in', inboundEventId: 13 }, { role: 'assistant', content: 'the answer' }] }),
      shape,
    );
    expect(commit.messages.map((m) => [m.role, m.content, m.inboundEventId])).toEqual([
      ['user', 'first', 11],
      ['user', 'second', 12],
      ['user', 'steered in', 13],
      ['assistant', 'the answer', undefined],
    ]);
    expect(commit).toMatchObject({ turnId: 5, sessionId: 70, status: 'completed', inboundEventIds: [11, 12, 13], claimFor: 'claim', stoppedByEventId: undefined });
    expect(commit.replies).toEqual([{ platform: 'telegram', target: { chat_id: 7, reply_to: 12 }, chunks: ['the answer'] }]);
  });

  it('splits a long reply at the platform limit, tells a suspended user first, and says when older messages were summarised', () => {
    const long = 'word '.repeat(30).trim();
    const commit = buildCommit(inputs({ status: 'completed', replyText: long, entries: [] }, { prepared: { conversation, session, compressed: true, suspendedNotice: 'restart_loop' } }), { messageLimit: 60, compressionNotice: true });
    expect(commit.replies[0]?.chunks.join(' ')).toBe(notices.suspendedRestartLoop);
    const chunks = commit.replies[1]?.chunks ?? [];
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((c) => c.length <= 60)).toBe(true);
    expect(chunks.join(' ')).toMatch(/^\(Older messages were summarised to make room\.\)/);
  });

  it('stores text Postgres would refuse without failing: U+0000 is normalised away', () => {
    const commit = buildCommit(inputs({ status: 'completed', replyText: 'a\u0000b', entries: [{ role: 'assistant', content: 'a\u0000b' }] }), shape);
    expect(commit.messages.at(-1)?.content).not.toContain('\u0000');
    expect(commit.replies[0]?.chunks.join('')).not.toContain('\u0000');
  });

  it('sends nothing for a platform without a sender, and nothing for a cancelled turn, whose /stop is credited', () => {
    const stopped = stateAfter({ kind: 'taken', upTo: 12 }, { kind: 'signal', signal: { kind: 'stop', inboundEventId: 14, storedAt: 0 } });
    const cancelled = buildCommit(inputs(stoppedExecution(stopped), { active: { state: stopped } }), shape);
    expect(cancelled).toMatchObject({ status: 'cancelled', replies: [], stoppedByEventId: 14 });
    expect(buildCommit(inputs({ status: 'completed', replyText: 'x', entries: [] }), { ...shape, messageLimit: undefined }).replies).toEqual([]);
  });

  it("keeps the runtime's thread on the session and moves the crash streak: a crash counts, a completed turn clears, a stop leaves it (issue 21)", () => {
    const crashed = buildCommit(inputs({ status: 'failed', error: 'RUNTIME_CRASHED', replyText: notices.runtimeCrashed, entries: [], runtimeThreadId: 'thr-9' }), shape);
    expect(crashed).toMatchObject({ runtimeThreadId: 'thr-9', crashStreak: 'increment' });
    expect(crashed.replies[0]?.chunks).toEqual([notices.runtimeCrashed]);
    const completed = buildCommit(inputs({ status: 'completed', replyText: 'ok', entries: [] }), shape);
    expect([completed.runtimeThreadId, completed.crashStreak]).toEqual([undefined, 'reset']);
    expect(buildCommit(inputs({ status: 'cancelled', replyText: null, entries: [] }), shape).crashStreak).toBe('keep');
  });

  it('tells a user whose conversation crash-looped why the session is fresh, before the reply', () => {
    const commit = buildCommit(inputs({ status: 'completed', replyText: 'hi', entries: [] }, { prepared: { conversation, session, compressed: false, suspendedNotice: 'runtime_crash_loop' } }), shape);
    expect(commit.replies.map((r) => r.chunks.join(''))).toEqual([notices.suspendedRuntimeCrashLoop, 'hi']);
  });

  it('finishes a streamed message that did not complete with what was shown and the marker; a notice follows it (issue 22)', () => {
    const stream = { open: true, shown: 'once upon a …' };
    expect(buildCommit(inputs({ status: 'interrupted', replyText: null, entries: [], stream }), shape).replies.map((r) => r.chunks)).toEqual([['once upon a\n\n[stopped]']]);
    const timedOut = buildCommit(inputs({ status: 'failed', error: 'TURN_TIMEOUT', replyText: notices.timedOut, entries: [], stream }), shape);
    expect(timedOut.replies.map((r) => r.chunks)).toEqual([['once upon a\n\n[stopped]'], [notices.timedOut]]);
    // A completed answer replaces the growing text with the committed reply, nothing more.
    expect(buildCommit(inputs({ status: 'completed', replyText: 'once upon a time', entries: [], stream }), shape).replies.map((r) => r.chunks)).toEqual([['once upon a time']]);
  });

  it('credits no /stop for a turn that completed before the stop landed', () => {
    const state = stateAfter({ kind: 'taken', upTo: 12 }, { kind: 'signal', signal: { kind: 'stop', inboundEventId: 14, storedAt: 0 } });
    expect(buildCommit(inputs({ status: 'completed', replyText: 'done anyway', entries: [] }, { active: { state } }), shape).stoppedByEventId).toBeUndefined();
  });
});
