import { describe, expect, it } from 'vitest';
import { beginTurn, commitTurn, ensureCurrentSession, loadConversation, loadTurnState, storeInboundEvent } from '@switchboard/db';
import { useTestDbClient } from '@switchboard/db/testing';
import { handleCommand } from './handle-command.ts';
import { planWork } from './plan-work.ts';
import type { WorkerContext } from '../worker-context.ts';

// Issue 20: the worker takes a command from inbound_events.command, stored
// by ingress, and parses the text only of rows never parsed (command NULL).
const db = useTestDbClient({ max: 2 });

/** What a command needs of the worker for /stop: the database, the default mode and a sender's limit. */
const context = () => ({ db: db.client.db, config: { BUSY_INPUT_MODE: 'interrupt' }, senders: new Map([['telegram', { messageLimit: 4096 }]]) }) as unknown as WorkerContext;

async function store(chatId: string, eventId: string, text: string, command: string | null) {
  return storeInboundEvent(db.client.db, {
    platform: 'telegram', accountId: 'bot', eventId, conversationKey: `telegram:bot:${chatId}::`,
    chatId, threadId: '', userScope: '', userId: 'u1', text, command, replyTarget: { chat_id: Number(chatId) }, refuseAtPending: null,
  });
}

/** Plans the conversation's next work as the work loop does (planPass). */
async function planNext(conversationId: number) {
  const state = await loadTurnState(db.client.db, conversationId, 64);
  return { state, work: planWork('interrupt', 'telegram', state?.pending ?? [], 32) };
}

/** Plans the next work and runs it if it is a command; returns the reply parts. */
async function runNextCommand(conversationId: number) {
  const { state, work } = await planNext(conversationId);
  if (work.kind !== 'command' || !state) return { work, replies: [] };
  const outbox = await handleCommand(context(), { conversation: state.conversation, event: work.event, command: work.event.chatCommand, claimId: 'claim-1' });
  return { work, replies: outbox.map((row) => row.text) };
}

describe('commands from the stored column', () => {
  it('handles a row ingress stored as a command as that command, whatever its text says', async () => {
    // Text that parses as nothing, stored as /stop: only the column can make it a stop.
    const { conversationId } = await store('501', 'c1', 'no command in this text', 'stop');
    const { work, replies } = await runNextCommand(conversationId);
    expect(work).toMatchObject({ kind: 'command', event: { chatCommand: { name: 'stop' } } });
    expect(replies).toEqual(['Nothing was running.']);
  });

  it('gives the model a row ingress stored as plain text, even when the text looks like a command', async () => {
    const { conversationId, inboundEventId } = await store('502', 'c2', '/stop', 'text');
    const { work } = await planNext(conversationId);
    expect(work).toMatchObject({ kind: 'turn', events: [{ id: inboundEventId, chatCommand: null }] });
  });

  it('reads /busy with its mode from the column alone', async () => {
    const { conversationId } = await store('503', 'c3', 'text that is no command', 'busy:queue');
    const { work } = await planNext(conversationId);
    expect(work).toMatchObject({ kind: 'command', event: { chatCommand: { name: 'busy', mode: 'queue' } } });
  });

  it('still stops on a /stop stored before the column existed (NULL), and says "Stopped." for the turn it cancelled', async () => {
    const first = await store('504', 'c4', 'write me a poem', null);
    const stop = await store('504', 'c5', '/stop', null);
    const conversation = await loadConversation(db.client.db, first.conversationId);
    const sessionId = await ensureCurrentSession(db.client.db, conversation!);
    const begun = await beginTurn(db.client.db, { conversationId: first.conversationId, sessionId, workerId: 'w1', suspendThreshold: 3, firstInputEventId: first.inboundEventId, maxRunningPerUser: 4 });
    if (begun.kind !== 'begun') throw new Error(begun.kind);
    // The legacy text is read as plain input, then the turn it started is cancelled by the legacy /stop.
    expect((await planNext(first.conversationId)).work).toMatchObject({ kind: 'turn', events: [{ id: first.inboundEventId }] });
    const committed = await commitTurn(db.client.db, {
      turnId: begun.turnId, conversationId: first.conversationId, sessionId, status: 'cancelled', inboundEventIds: [first.inboundEventId],
      messages: [], replies: [], stoppedByEventId: stop.inboundEventId,
    });
    expect(committed.kind).toBe('committed');
    const { work, replies } = await runNextCommand(first.conversationId);
    expect(work).toMatchObject({ kind: 'command', event: { id: stop.inboundEventId, chatCommand: { name: 'stop' } } });
    expect(replies).toEqual(['Stopped.']);
  });
});
