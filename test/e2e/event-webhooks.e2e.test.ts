import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fastRestartEnv, stopWorker, type StopResult } from '../support/restart-helpers.ts';
import { startWebhookReceiver, verifySignature, type WebhookReceiver, type WebhookRequest } from '../support/restart-webhook-receiver.ts';
import { TestSystem } from '../support/system.ts';
import { waitForCondition } from '../support/turn-helpers.ts';

/**
 * Lifecycle events to webhooks (docs/restarts.md): recorded in
 * Postgres with the turn, POSTed signed (HMAC-SHA256 over timestamp and
 * body), in order per conversation, retried with backoff, and not lost when
 * the worker delivering them stops (SIGTERM) or dies (SIGKILL) while the
 * receiver is failing.
 */

const secret = 'whsec-test-0123456789abcdef';
const chats = { one: 7201, two: 7202 } as const;

interface RecordedEventRow {
  id: number;
  conversation_id: number;
  type: string;
  payload: Record<string, unknown>;
}

describe('lifecycle event webhooks across worker restarts', () => {
  let receiver: WebhookReceiver;
  let system: TestSystem;
  const stops: StopResult[] = [];

  const send = async (chatId: number, message: string) => {
    const { status } = await system.sendTelegram({ chatId, text: message });
    expect(status).toBe(200);
  };
  const recordedEvents = () =>
    system.sql<RecordedEventRow[]>`select id::int as id, conversation_id::int as conversation_id, type, payload from lifecycle_events order by id`;
  const deliveries = () =>
    system.sql<{ event_id: number; status: string; attempts: number }[]>`select event_id::int as event_id, status, attempts from event_deliveries order by id`;
  const conversationId = async (chatId: number) => {
    const [row] = await system.sql<{ id: number }[]>`select id::int as id from conversations where chat_id = ${String(chatId)}`;
    return row?.id ?? -1;
  };
  /** Waits until Postgres holds `count` events of the chat's conversation. */
  const waitForRecorded = async (chatId: number, count: number) => {
    const id = await conversationId(chatId);
    await waitForCondition(`${count} recorded events for chat ${chatId}`, async () => (await recordedEvents()).filter((e) => e.conversation_id === id).length >= count, 20_000);
  };
  const waitAllSent = async () => {
    await waitForCondition('every event delivery sent', async () => {
      const rows = await deliveries();
      return rows.length > 0 && rows.every((d) => d.status === 'sent');
    }, 30_000);
  };

  beforeAll(async () => {
    receiver = await startWebhookReceiver(secret);
    receiver.failing = true;
    system = await TestSystem.start({
      workers: 1,
      workerProcesses: true,
      workerEnv: { ...fastRestartEnv, EVENT_WEBHOOK_URLS: receiver.url, EVENT_WEBHOOK_SECRET: secret },
    });
  }, 90_000);
  afterAll(async () => {
    await system?.close();
    await receiver?.close();
  });

  it('deliveries pending at a SIGTERM are delivered by the next worker, once each', { timeout: 90_000 }, async () => {
    await send(chats.one, 'w1: hello');
    await system.waitForTelegram(chats.one, 1);
    await send(chats.two, 'w2: hello');
    await system.waitForTelegram(chats.two, 1);
    await send(chats.one, '/reset');
    await system.waitForTelegram(chats.one, 2);
    await waitForRecorded(chats.one, 4);
    await waitForRecorded(chats.two, 2);
    const [one, two] = [await conversationId(chats.one), await conversationId(chats.two)];

    // The receiver refuses the head of each conversation's queue at least once...
    await receiver.waitFor('a refused attempt for each conversation', (rs) => [one, two].every((c) => rs.some((r) => r.status === 500 && r.event?.conversationId === c)));
    // ...and the worker is stopped with everything still pending.
    const stopped = await stopWorker(system, 'SIGTERM');
    stops.push(stopped);
    expect(stopped.exitCode).toBe(0);
    const afterStop = receiver.requests.length;
    expect(receiver.accepted()).toEqual([]);
    expect((await deliveries()).every((d) => d.status === 'pending')).toBe(true);

    receiver.failing = false;
    await system.addWorker(true);
    await waitAllSent();
    expect(receiver.requests.slice(afterStop).every((r) => r.status === 200)).toBe(true);
    expect((await deliveries()).filter((d) => d.attempts > 1).length).toBeGreaterThanOrEqual(2);
  });

  it('deliveries pending when the worker is SIGKILLed are delivered too', { timeout: 90_000 }, async () => {
    receiver.failing = true;
    const before = (await recordedEvents()).length;
    await send(chats.two, 'w2: again');
    await system.waitForTelegram(chats.two, 2);
    await waitForRecorded(chats.two, 4);
    const fresh = (await recordedEvents()).slice(before);
    expect(fresh.map((e) => e.type)).toEqual(['turn.started', 'turn.ended']);
    await receiver.waitFor('a refused attempt of a new event', (rs) => rs.some((r) => r.status === 500 && r.event?.id === fresh[0]?.id));

    // The dead worker held the delivery lock on its own connection: Postgres frees it when the process is gone.
    const killed = await stopWorker(system, 'SIGKILL');
    stops.push(killed);
    expect(killed.signalCode).toBe('SIGKILL');
    expect((await deliveries()).filter((d) => d.status === 'pending').map((d) => d.event_id)).toEqual(fresh.map((e) => e.id));
    receiver.failing = false;
    await system.addWorker(true);
    await waitAllSent();
  });

  it('every event arrived once, signed, in order per conversation, as recorded', async () => {
    const events = await recordedEvents();
    const [one, two] = [await conversationId(chats.one), await conversationId(chats.two)];
    expect(events.filter((e) => e.conversation_id === one).map((e) => e.type)).toEqual(['session.started', 'turn.started', 'turn.ended', 'session.finalized', 'session.started']);
    expect(events.filter((e) => e.conversation_id === two).map((e) => e.type)).toEqual(['session.started', 'turn.started', 'turn.ended', 'turn.started', 'turn.ended']);

    // Signed as documented, with a current timestamp, on every attempt (a refused one too).
    for (const request of receiver.requests) {
      expect(request.signatureValid, `request ${request.seq}`).toBe(true);
      expect(Math.abs(request.timestampSkewS), `request ${request.seq} timestamp skew`).toBeLessThan(60);
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.path).toBe('/hooks/switchboard');
    }
    // The verifier itself rejects a changed body, timestamp or secret (so the check above means something).
    const sample = receiver.accepted()[0] as WebhookRequest;
    const timestamp = sample.headers['x-switchboard-request-timestamp'] as string;
    const signature = sample.headers['x-switchboard-signature'] as string;
    expect(signature).toMatch(/^v0=[0-9a-f]{64}$/);
    expect(verifySignature(secret, timestamp, sample.rawBody, signature)).toBe(true);
    expect(verifySignature(secret, timestamp, `${sample.rawBody} `, signature)).toBe(false);
    expect(verifySignature(secret, String(Number(timestamp) + 1), sample.rawBody, signature)).toBe(false);
    expect(verifySignature('another-secret', timestamp, sample.rawBody, signature)).toBe(false);

    // Once each: every recorded event accepted exactly once, and nothing else.
    const acceptedIds = receiver.accepted().map((r) => r.event?.id);
    expect([...acceptedIds].sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(events.map((e) => e.id));

    for (const conversation of [one, two]) {
      const recorded = events.filter((e) => e.conversation_id === conversation);
      // In order: accepted in id order, and no attempt ever overtook an earlier undelivered event.
      const accepted = receiver.accepted().filter((r) => r.event?.conversationId === conversation);
      expect(accepted.map((r) => r.event?.id)).toEqual(recorded.map((e) => e.id));
      const attempted = receiver.requests.filter((r) => r.event?.conversationId === conversation).map((r) => r.event?.id ?? 0);
      expect(attempted).toEqual([...attempted].sort((a, b) => a - b));
      // The body is the recorded event: its id plus the payload.
      for (const [i, request] of accepted.entries()) {
        expect(request.event).toEqual({ id: recorded[i]?.id, ...recorded[i]?.payload });
        expect(request.event).toMatchObject({ conversationId: conversation, type: recorded[i]?.type, at: expect.any(String) });
      }
    }
    const finalized = receiver.accepted().find((r) => r.event?.type === 'session.finalized')?.event;
    expect(finalized).toMatchObject({ conversationId: one, reason: 'reset', sessionId: expect.any(Number) });
    const ended = receiver.accepted().filter((r) => r.event?.type === 'turn.ended').map((r) => r.event?.outcome);
    expect(ended).toEqual(['completed', 'completed', 'completed']);

    expect(stops.map((s) => [s.signal, s.exitCode, s.signalCode])).toEqual([
      ['SIGTERM', 0, null],
      ['SIGKILL', null, 'SIGKILL'],
    ]);
  });
});
