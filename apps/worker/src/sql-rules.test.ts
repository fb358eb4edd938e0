import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compressionBackoffMaxDoublings,
  countsAsRestart,
  crashStreakSuspends,
  isOverQueueCap,
  isRestartLoop,
  judgeCompressionFailure,
  judgeStaleTurn,
  queueCapFor,
  restartLoopStartsAt,
  staleTurnEndings,
  staleTurnRule,
  type TurnWorker,
} from '@switchboard/core';
import {
  beginTurn,
  cutOffRunningTurns,
  ensureCurrentSession,
  loadConversation,
  recordCompressionFailure,
  registerWorker,
  settleRunningTurn,
  storeInboundEvent,
  suspendRestartLoops,
} from '@switchboard/db';
import { useTestDbClient } from '@switchboard/db/testing';

// Rules that stay inside one SQL statement for atomicity take their
// parameters from core; these check, on the same inputs, that the statement
// decides what the core rule says (issue 20).
const db = useTestDbClient({ max: 2 });
let chats = 0;

async function store(chatId: string, eventId: string, text: string, refuseAtPending: number | null) {
  return storeInboundEvent(db.client.db, {
    platform: 'telegram', accountId: 'bot', eventId, conversationKey: `telegram:bot:${chatId}::`,
    chatId, threadId: '', userScope: '', userId: `u${chatId}`, text, command: null, replyTarget: {}, refuseAtPending,
  });
}

/** A conversation with one pending message and a current session. */
async function newConversation() {
  const chatId = String(9000 + ++chats);
  const stored = await store(chatId, `first-${chatId}`, 'hello', null);
  const sessionId = await ensureCurrentSession(db.client.db, (await loadConversation(db.client.db, stored.conversationId))!);
  return { conversationId: stored.conversationId, sessionId, eventId: stored.inboundEventId };
}

describe('the queued-input cap in storeInboundEvent agrees with core', () => {
  it('refuses exactly the events isOverQueueCap refuses, /stop never', async () => {
    const signals = fc.array(fc.constantFrom('input' as const, 'input' as const, 'none' as const, 'stop' as const), { minLength: 1, maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(signals, fc.integer({ min: 1, max: 5 }), async (sequence, maxQueuedInput) => {
        const chatId = String(9000 + ++chats);
        let waiting = 0;
        for (const [i, signal] of sequence.entries()) {
          const cap = queueCapFor(signal, maxQueuedInput);
          const stored = await store(chatId, `${chatId}-${i}`, signal === 'stop' ? '/stop' : `m${i}`, cap);
          expect(stored.status, `event ${i} (${signal}) with ${waiting} waiting, cap ${cap}`).toBe(isOverQueueCap(waiting, cap) ? 'refused' : 'pending');
          if (stored.status === 'pending') waiting++;
        }
      }),
      { numRuns: 25 },
    );
  });
});

describe('the restart threshold in beginTurn and suspendRestartLoops agrees with core', () => {
  const threshold = 3;

  it('begins a turn below the loop and refuses it from the loop on', async () => {
    for (const count of [0, 1, 2, 3, 4]) {
      const ids = await newConversation();
      await db.client.db.$client`update conversations set restart_count = ${count} where id = ${ids.conversationId}`;
      const begun = await beginTurn(db.client.db, {
        conversationId: ids.conversationId, sessionId: ids.sessionId, workerId: 'w', suspendThreshold: restartLoopStartsAt(threshold), firstInputEventId: ids.eventId, maxRunningPerUser: 4,
      });
      expect(begun.kind, `restart_count ${count}`).toBe(isRestartLoop(count, threshold) ? 'restart_loop' : 'begun');
    }
  });

  it('suspends exactly the conversations in a loop', async () => {
    const counts = [0, 2, 3, 5];
    const conversations = [];
    for (const count of counts) {
      const ids = await newConversation();
      await db.client.db.$client`update conversations set restart_count = ${count} where id = ${ids.conversationId}`;
      conversations.push(ids.conversationId);
    }
    const suspended = (await suspendRestartLoops(db.client.db, restartLoopStartsAt(threshold))).map((s) => s.conversationId);
    expect(conversations.map((id) => suspended.includes(id))).toEqual(counts.map((count) => isRestartLoop(count, threshold)));
  });
});

describe('the runtime crash streak in beginTurn and suspendRestartLoops agrees with core crashStreakSuspends (issue 21)', () => {
  const threshold = 3;
  const streaks = [0, 1, 2, 3, 4];

  it('begins a turn below the threshold and refuses it from there on', async () => {
    for (const streak of streaks) {
      const ids = await newConversation();
      await db.client.db.$client`update conversations set runtime_crash_streak = ${streak} where id = ${ids.conversationId}`;
      const begun = await beginTurn(db.client.db, {
        conversationId: ids.conversationId, sessionId: ids.sessionId, workerId: 'w', suspendThreshold: restartLoopStartsAt(threshold), firstInputEventId: ids.eventId, maxRunningPerUser: 4,
      });
      expect(begun.kind, `runtime_crash_streak ${streak}`).toBe(crashStreakSuspends(streak, threshold) ? 'restart_loop' : 'begun');
    }
  });

  it('suspends exactly the conversations the rule suspends, with reason runtime_crash_loop', async () => {
    const conversations = [];
    for (const streak of streaks) {
      const ids = await newConversation();
      await db.client.db.$client`update conversations set runtime_crash_streak = ${streak} where id = ${ids.conversationId}`;
      conversations.push(ids.conversationId);
    }
    const suspended = await suspendRestartLoops(db.client.db, restartLoopStartsAt(threshold));
    const reasonOf = (id: number) => suspended.find((s) => s.conversationId === id)?.reason ?? null;
    expect(conversations.map(reasonOf)).toEqual(streaks.map((streak) => (crashStreakSuspends(streak, threshold) ? 'runtime_crash_loop' : null)));
  });
});

describe('recordCompressionFailure agrees with core judgeCompressionFailure', () => {
  const policy = { backoffMs: 10_000, maxAttempts: 3 };

  it('counts, blocks and backs off as the core rule says', async () => {
    for (const before of [{ failures: 0, blocked: false }, { failures: 1, blocked: false }, { failures: 2, blocked: false }, { failures: 0, blocked: true }, { failures: 8, blocked: false }]) {
      const { sessionId } = await newConversation();
      await db.client.db.$client`update sessions set compress_failures = ${before.failures}, compress_blocked = ${before.blocked} where id = ${sessionId}`;
      const recorded = await recordCompressionFailure(db.client.db, sessionId, { ...policy, maxDoublings: compressionBackoffMaxDoublings });
      const [row] = await db.client.db.$client<{ retry_in_ms: number }[]>`select (extract(epoch from next_compress_at - now()) * 1000)::float8 as retry_in_ms from sessions where id = ${sessionId}`;
      const expected = judgeCompressionFailure(before, policy);
      expect(recorded, JSON.stringify(before)).toEqual({ failures: expected.failures, blocked: expected.blocked });
      // Read a moment after the update's now(): within 2 s of the rule's backoff, whose steps are 10 s apart.
      expect(Math.abs((row?.retry_in_ms ?? 0) - expected.retryInMs), JSON.stringify(before)).toBeLessThan(2000);
    }
  });
});

describe('settleRunningTurn and cutOffRunningTurns agree with core judgeStaleTurn', () => {
  const deadAfterMs = 5000;
  let workers = 0;

  /** A conversation whose running turn belongs to `worker` (null: a worker with no row), and the rule's verdict on it. */
  async function runningTurnOf(worker: TurnWorker | null) {
    const ids = await newConversation();
    const workerId = `sql-rules-worker-${++workers}`;
    if (worker) await registerWorker(db.client.db, { id: workerId, hostname: 'h', pid: workers });
    // Begun while its worker ran (a worker declared dead begins nothing); what became of the worker is set after.
    const begun = await beginTurn(db.client.db, {
      conversationId: ids.conversationId, sessionId: ids.sessionId, workerId, suspendThreshold: restartLoopStartsAt(3), firstInputEventId: ids.eventId, maxRunningPerUser: 4,
    });
    if (begun.kind !== 'begun') throw new Error(`turn not begun: ${begun.kind}`);
    if (worker) {
      await db.client.db.$client`update workers set status = ${worker.status}, heartbeat_at = now() - ${worker.heartbeatAgeMs}::int * interval '1 millisecond' where id = ${workerId}`;
    }
    return { ...ids, workerId, turnId: begun.turnId };
  }

  async function settledRow(turnId: number, conversationId: number) {
    const [row] = await db.client.db.$client<{ status: string; error: string | null; cut_off: boolean; restart_count: number }[]>`
      select t.status, t.error, t.cut_off_at is not null as cut_off, c.restart_count from turns t join conversations c on c.id = t.conversation_id where t.id = ${turnId} and c.id = ${conversationId}`;
    return row;
  }

  // Ages at least a second away from the limit: the statement runs a moment after the heartbeat is set.
  const age = fc.oneof(fc.integer({ min: 0, max: deadAfterMs - 1000 }), fc.integer({ min: deadAfterMs + 1000, max: 120_000 }));
  const worker = fc.option(fc.record({ status: fc.constantFrom<TurnWorker['status']>('running', 'stopping', 'stopped', 'dead'), heartbeatAgeMs: age }), { nil: null });

  it('supersedes a live worker\'s turn and cuts off (counted) a dead or missing one\'s', async () => {
    const cases: [string, TurnWorker | null][] = [
      ['live', { status: 'running', heartbeatAgeMs: 0 }],
      ['dead (silent)', { status: 'running', heartbeatAgeMs: deadAfterMs + 5000 }],
      ['dead (claimed)', { status: 'dead', heartbeatAgeMs: deadAfterMs + 5000 }],
      ['stopping', { status: 'stopping', heartbeatAgeMs: 0 }],
      ['missing', null],
    ];
    const fates = [];
    for (const [name, w] of cases) {
      const turn = await runningTurnOf(w);
      const fate = judgeStaleTurn(w, deadAfterMs);
      const settled = await settleRunningTurn(db.client.db, turn.conversationId, staleTurnRule(deadAfterMs));
      expect(settled, name).toEqual(fate === 'cut_off' ? { cutOff: 1, superseded: 0 } : { cutOff: 0, superseded: 1 });
      expect(await settledRow(turn.turnId, turn.conversationId), name).toEqual({ ...staleTurnEndings[fate], cut_off: fate === 'cut_off', restart_count: countsAsRestart(fate) ? 1 : 0 });
      fates.push(fate);
    }
    expect(fates).toEqual(['superseded', 'cut_off', 'cut_off', 'cut_off', 'cut_off']);
  });

  it('decides as the rule does for any worker status and heartbeat age', async () => {
    await fc.assert(
      fc.asyncProperty(worker, async (w) => {
        const turn = await runningTurnOf(w);
        const fate = judgeStaleTurn(w, deadAfterMs);
        await settleRunningTurn(db.client.db, turn.conversationId, staleTurnRule(deadAfterMs));
        expect(await settledRow(turn.turnId, turn.conversationId), JSON.stringify(w)).toEqual({ ...staleTurnEndings[fate], cut_off: fate === 'cut_off', restart_count: countsAsRestart(fate) ? 1 : 0 });
      }),
      { numRuns: 20 },
    );
  });

  it('cutOffRunningTurns ends a stopping or dead worker\'s turns as the rule\'s cut-off, counted once', async () => {
    for (const w of [{ status: 'stopping', heartbeatAgeMs: 0 }, { status: 'dead', heartbeatAgeMs: deadAfterMs + 5000 }] satisfies TurnWorker[]) {
      const turn = await runningTurnOf(w);
      const fate = judgeStaleTurn(w, deadAfterMs);
      expect(fate).toBe('cut_off');
      expect(await cutOffRunningTurns(db.client.db, { workerId: turn.workerId }, staleTurnRule(deadAfterMs).cutOff)).toEqual([turn.conversationId]);
      expect(await settledRow(turn.turnId, turn.conversationId), w.status).toEqual({ ...staleTurnEndings[fate], cut_off: true, restart_count: 1 });
    }
  });
});
