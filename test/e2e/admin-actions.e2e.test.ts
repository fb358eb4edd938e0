import { Redis } from 'ioredis';
import { conversationLeaseKey } from '@switchboard/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, adminTokenEnv, aliceToken, bobToken, openEventStream, type EventStreamClient } from '../support/admin-client.ts';
import { TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';

interface ConversationView {
  id: number;
  key: string;
  status: string;
  suspendReason: string | null;
  busyMode: string | null;
  restartCount: number;
  currentSessionId: number | null;
  preSuspendSessionId: number | null;
  runningTurnId: number | null;
}
type ActionResult = { ok: true; conversation: ConversationView };

describe('admin API: conversation actions and the audit log', () => {
  let system: TestSystem;
  let base: string;
  let redis: Redis;
  const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown, token = aliceToken) => adminRequest<T>(base, method, path, { body, token });

  beforeAll(async () => {
    system = await TestSystem.start({ gatewayEnv: { ADMIN_TOKEN: adminTokenEnv } });
    base = system.gateway.url;
    redis = new Redis(redisUrl());
  });
  afterAll(async () => {
    redis?.disconnect();
    await system?.close();
  });

  /**
   * Until no worker holds the conversation (docs/turns.md: the lease key). A
   * worker inside its loop may already have read the conversation row, so an
   * action that moves the session pointer is only deterministic after this.
   */
  async function waitUntilIdle(conversationId: number): Promise<void> {
    const key = conversationLeaseKey(system.redisPrefix, conversationId);
    const deadline = Date.now() + 10_000;
    while ((await redis.exists(key)) === 1) {
      if (Date.now() > deadline) throw new Error(`conversation ${conversationId} still leased`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** A new chat's first message, answered; returns the conversation and a stream of its events. */
  async function startChat(chatId: number, text = 'hello'): Promise<{ conversation: ConversationView; events: EventStreamClient }> {
    await system.sendTelegram({ chatId, text });
    await system.waitForTelegram(chatId, 1);
    const [row] = await system.sql<{ id: string }[]>`select id from conversations where chat_id = ${String(chatId)}`;
    const id = Number(row?.id);
    const conversation = (await call<{ conversation: ConversationView }>('GET', `/admin/conversations/${id}`)).body.conversation;
    const events = await openEventStream(base, { token: aliceToken, query: { conversation: String(id) } });
    return { conversation, events };
  }

  async function sessionRow(id: number) {
    const [row] = await system.sql<{ status: string; end_reason: string | null; parent_session_id: string | null }[]>`
      select status, end_reason, parent_session_id from sessions where id = ${id}`;
    return row;
  }

  it('suspends and resumes, restoring the pre-suspension session and finalizing the one started meanwhile', async () => {
    const { conversation, events } = await startChat(9201);
    const original = conversation.currentSessionId as number;

    const suspended = await call<ActionResult>('POST', `/admin/conversations/${conversation.id}/suspend`, { reason: 'investigating' });
    expect(suspended.status).toBe(200);
    expect(suspended.body.conversation).toMatchObject({ status: 'suspended', suspendReason: 'investigating', currentSessionId: null, preSuspendSessionId: original });
    expect(await events.waitFor((e) => e.type === 'conversation.suspended')).toMatchObject({ conversationId: conversation.id, sessionId: original, reason: 'investigating' });
    // Parked, not finalized: the resume below makes it current again.
    expect(await events.waitFor((e) => e.type === 'session.parked')).toMatchObject({ conversationId: conversation.id, sessionId: original, reason: 'investigating' });
    const again = await call('POST', `/admin/conversations/${conversation.id}/suspend`);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: 'ALREADY_SUSPENDED' });

    // While suspended, a message starts a fresh session; the parked chain is untouched.
    const mark = events.events.length;
    await system.sendTelegram({ chatId: 9201, text: 'while suspended' });
    await events.waitFor((e) => e.type === 'turn.ended', 15_000, mark);
    const during = (await call<{ conversation: ConversationView }>('GET', `/admin/conversations/${conversation.id}`)).body.conversation;
    expect(during.currentSessionId).not.toBeNull();
    expect(during.currentSessionId).not.toBe(original);
    const fresh = during.currentSessionId as number;
    await system.waitForTelegram(9201, 2);
    await waitUntilIdle(conversation.id);

    // Input a restart-loop suspension held back (status held) runs again on resume.
    await system.sql`
      insert into inbound_events (platform, account_id, event_id, conversation_id, user_id, text, reply_target, status)
      select platform, account_id, 'held-9201', conversation_id, user_id, 'held back', reply_target, 'held'
      from inbound_events where conversation_id = ${conversation.id} limit 1`;

    const resumed = await call<ActionResult>('POST', `/admin/conversations/${conversation.id}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.conversation).toMatchObject({ status: 'active', suspendReason: null, currentSessionId: original, preSuspendSessionId: null });
    expect(await sessionRow(fresh)).toMatchObject({ status: 'finalized', end_reason: 'resumed' });
    expect(await sessionRow(original)).toMatchObject({ status: 'active' });
    expect(await events.waitFor((e) => e.type === 'session.finalized')).toMatchObject({ sessionId: fresh, reason: 'resumed' });
    expect(await events.waitFor((e) => e.type === 'conversation.resumed')).toMatchObject({ sessionId: original });
    // Only the session the resume ended was finalized; the parked one came back.
    expect(events.events.filter((e) => e.type === 'session.finalized').map((e) => e.sessionId)).toEqual([fresh]);
    expect((await call('POST', `/admin/conversations/${conversation.id}/resume`)).body).toMatchObject({ error: 'NOT_SUSPENDED' });

    const replies = await system.waitForTelegram(9201, 3);
    expect(replies.at(-1)?.text).toBe('echo: held back');
    // The held input ran in the restored session, after what it held before suspension.
    const transcript = await call<{ messages: { content: string }[] }>('GET', `/admin/conversations/${conversation.id}/transcript`);
    expect(transcript.body.messages.map((m) => m.content)).toEqual(['hello', 'echo: hello', 'held back', 'echo: held back']);
    events.close();
  });

  it('resets: finalizes the current session, starts a fresh one and clears the restart counter', async () => {
    const { conversation, events } = await startChat(9202);
    await system.sql`update conversations set restart_count = 2 where id = ${conversation.id}`;
    const reset = await call<ActionResult>('POST', `/admin/conversations/${conversation.id}/reset`);
    expect(reset.status).toBe(200);
    expect(reset.body.conversation.restartCount).toBe(0);
    expect(reset.body.conversation.currentSessionId).not.toBe(conversation.currentSessionId);
    expect(await sessionRow(conversation.currentSessionId as number)).toMatchObject({ status: 'finalized', end_reason: 'operator' });
    expect(await events.waitFor((e) => e.type === 'session.finalized')).toMatchObject({ sessionId: conversation.currentSessionId, reason: 'operator' });
    expect(await events.waitFor((e) => e.type === 'session.started')).toMatchObject({ sessionId: reset.body.conversation.currentSessionId });
    expect((await call('POST', '/admin/conversations/999999/reset')).status).toBe(404);
    events.close();
  });

  it('sets the busy mode and refuses bad bodies naming the field', async () => {
    const { conversation, events } = await startChat(9203);
    events.close();
    const path = `/admin/conversations/${conversation.id}/busy-mode`;
    expect((await call<ActionResult>('PUT', path, { mode: 'queue' })).body.conversation.busyMode).toBe('queue');
    expect((await call<ActionResult>('PUT', path, { mode: null })).body.conversation.busyMode).toBeNull();
    for (const [body, field] of [
      [{ mode: 'yell' }, 'mode'],
      [{}, 'mode'],
      [{ mode: 'queue', colour: 'blue' }, 'colour'],
      [undefined, 'mode'],
    ] as const) {
      const response = await call('PUT', path, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body, JSON.stringify(body)).toMatchObject({ error: 'INVALID_REQUEST', field });
    }
    expect((await call('PUT', '/admin/conversations/999999/busy-mode', { mode: 'queue' })).status).toBe(404);
    expect((await call('POST', `/admin/conversations/${conversation.id}/suspend`, { reason: 42 })).body).toMatchObject({ field: 'reason' });
    const [row] = await system.sql<{ status: string }[]>`select status from conversations where id = ${conversation.id}`;
    expect(row?.status).toBe('active');
  });

  it('queues a compaction (202) through the compression job', async () => {
    const { conversation, events } = await startChat(9204);
    events.close();
    const compact = await call<{ ok: boolean; jobId: string }>('POST', `/admin/conversations/${conversation.id}/compact`);
    expect(compact.status).toBe(202);
    expect(compact.body.jobId).toEqual(expect.any(String));
    expect((await call('POST', '/admin/conversations/999999/compact')).status).toBe(404);
  });

  it('interrupts the running turn', async () => {
    await system.setModelScript({ rules: [{ match: 'take your time', delayMs: 30_000 }] });
    try {
      const { conversation, events } = await startChat(9205);
      const idle = await call<{ running: boolean }>('POST', `/admin/conversations/${conversation.id}/interrupt`);
      expect(idle.body).toEqual({ ok: true, running: false });
      const mark = events.events.length;
      await system.sendTelegram({ chatId: 9205, text: 'take your time' });
      const started = await events.waitFor((e) => e.type === 'turn.started', 15_000, mark);
      const running = await call<{ items: { id: number; status: string; durationMs: number }[] }>('GET', `/admin/turns?status=running&conversation=${conversation.id}`);
      expect(running.body.items).toEqual([expect.objectContaining({ id: started.turnId, status: 'running' })]);
      const busy = await call<{ items: { id: number; runningTurnId: number }[] }>('GET', '/admin/conversations?busy=true');
      expect(busy.body.items).toEqual([expect.objectContaining({ id: conversation.id, runningTurnId: started.turnId })]);
      const stop = await call<{ running: boolean }>('POST', `/admin/conversations/${conversation.id}/interrupt`, undefined, bobToken);
      expect(stop.body).toEqual({ ok: true, running: true });
      const ended = await events.waitFor((e) => e.type === 'turn.ended' && e.turnId === started.turnId, 10_000, mark);
      expect(ended.outcome).toBe('cancelled');
      const recent = await call<{ items: { id: number; status: string; durationMs: number; endedAt: string }[] }>('GET', `/admin/turns?conversation=${conversation.id}`);
      expect(recent.body.items[0]).toMatchObject({ id: started.turnId, status: 'cancelled' });
      expect(recent.body.items[0]?.durationMs).toBeLessThan(30_000);
      events.close();
    } finally {
      await system.setModelScript({});
    }
  });

  it('deletes only with the key as confirmation, removing the transcript', async () => {
    const { conversation, events } = await startChat(9206);
    const path = `/admin/conversations/${conversation.id}`;
    const missing = await call('DELETE', path);
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ field: 'confirm' });
    const mismatch = await call('DELETE', `${path}?confirm=telegram:wrong`);
    expect(mismatch.body).toMatchObject({ error: 'CONFIRMATION_MISMATCH', field: 'confirm' });
    expect((await call('GET', path)).status).toBe(200);

    const deleted = await call('DELETE', `${path}?confirm=${encodeURIComponent(conversation.key)}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ ok: true, deleted: { id: conversation.id, key: conversation.key } });
    expect(await events.waitFor((e) => e.type === 'session.finalized')).toMatchObject({ sessionId: conversation.currentSessionId, reason: 'deleted' });
    expect((await call('GET', path)).status).toBe(404);
    const [left] = await system.sql<{ n: number }[]>`
      select (select count(*) from sessions where conversation_id = ${conversation.id})
           + (select count(*) from messages where session_id = ${conversation.currentSessionId})
           + (select count(*) from inbound_events where conversation_id = ${conversation.id})
           + (select count(*) from outbox where conversation_id = ${conversation.id})::int as n`;
    expect(Number(left?.n)).toBe(0);
    expect((await call('DELETE', `${path}?confirm=${encodeURIComponent(conversation.key)}`)).status).toBe(404);
    events.close();
  });

  it('writes every change to the audit log: who, what, the target, the result, from where', async () => {
    const { conversation, events } = await startChat(9207);
    events.close();
    await call('POST', `/admin/conversations/${conversation.id}/suspend`, undefined, bobToken);
    await call('POST', `/admin/conversations/${conversation.id}/suspend`);
    await call('POST', `/admin/conversations/${conversation.id}/resume`);
    await call('GET', `/admin/conversations/${conversation.id}`);
    const audit = await call<{ items: { actor: string; action: string; target: string; result: string; clientAddress: string; detail: unknown; createdAt: string }[] }>(
      'GET',
      `/admin/audit?target=conversation:${conversation.id}`,
    );
    expect(audit.body.items.map((e) => [e.actor, e.action, e.result])).toEqual([
      ['alice', 'conversation.resume', 'ok'],
      ['alice', 'conversation.suspend', 'ALREADY_SUSPENDED'],
      ['bob', 'conversation.suspend', 'ok'],
    ]);
    expect(audit.body.items[2]).toMatchObject({ target: `conversation:${conversation.id}`, clientAddress: '127.0.0.1', detail: { reason: 'operator' } });
    const bobs = await call<{ items: { actor: string }[] }>('GET', '/admin/audit?actor=bob');
    expect(bobs.body.items.length).toBeGreaterThan(0);
    expect(bobs.body.items.every((e) => e.actor === 'bob')).toBe(true);
    expect((await call('GET', '/admin/audit?limit=9999')).body).toMatchObject({ field: 'limit' });
  });
});
