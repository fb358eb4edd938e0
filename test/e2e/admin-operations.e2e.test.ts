import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWorker } from '@switchboard/worker';
import { adminRequest, adminTokenEnv } from '../support/admin-client.ts';
import { TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';

describe('admin API: turns, queues, outbox, restarts and metrics', () => {
  let system: TestSystem;
  let base: string;
  const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => adminRequest<T>(base, method, path, { body });

  beforeAll(async () => {
    system = await TestSystem.start({ gatewayEnv: { ADMIN_TOKEN: adminTokenEnv } });
    base = system.gateway.url;
  });
  afterAll(async () => {
    await system?.close();
  });

  async function chat(chatId: number, text = 'hello'): Promise<number> {
    await system.sendTelegram({ chatId, text });
    await system.waitForTelegram(chatId, 1);
    const [row] = await system.sql<{ id: string }[]>`select id from conversations where chat_id = ${String(chatId)}`;
    return Number(row?.id);
  }

  it('lists recent turns with outcome and duration', async () => {
    const id = await chat(9301);
    const turns = await call<{ items: { conversationId: number; status: string; durationMs: number; endedAt: string | null }[] }>('GET', `/admin/turns?conversation=${id}`);
    expect(turns.status).toBe(200);
    expect(turns.body.items).toEqual([expect.objectContaining({ conversationId: id, status: 'completed' })]);
    expect(turns.body.items[0]?.durationMs).toBeGreaterThanOrEqual(0);
    expect((await call('GET', '/admin/turns?status=running')).body).toMatchObject({ items: [] });
    expect((await call('GET', '/admin/turns?status=dancing')).body).toMatchObject({ error: 'INVALID_REQUEST', field: 'status' });
  });

  it('shows queue figures and failed jobs with their error, and retries a failed job', async () => {
    const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    const queue = new Queue('turns', { connection, prefix: `${system.redisPrefix}:bull` });
    const events = new QueueEvents('turns', { connection: { url: redisUrl() }, prefix: `${system.redisPrefix}:bull` });
    try {
      await events.waitUntilReady();
      // A job no worker has a handler for fails at once: attempts 1.
      const job = await queue.add('no-such-job', {}, { attempts: 1, jobId: 'broken-1' });
      await expect(job.waitUntilFinished(events, 15_000)).rejects.toThrow();

      const figures = await call<{ queues: { name: string; failed: number; waiting: number; active: number; delayed: number }[] }>('GET', '/admin/queue');
      // The schedule occurrences' queue is shown beside the turns' (docs/schedules.md).
      expect(figures.body.queues).toEqual([expect.objectContaining({ name: 'turns', failed: 1 }), expect.objectContaining({ name: 'schedules', failed: 0 })]);
      expect((await call<{ items: unknown[] }>('GET', '/admin/queue/schedules/failed')).body.items).toEqual([]);
      const failed = await call<{ items: { id: string; name: string; failedReason: string; attemptsMade: number }[] }>('GET', '/admin/queue/turns/failed');
      expect(failed.body.items).toEqual([expect.objectContaining({ id: 'broken-1', name: 'no-such-job', attemptsMade: 1 })]);
      expect(failed.body.items[0]?.failedReason).not.toBe('');

      const retried = await call('POST', '/admin/queue/turns/jobs/broken-1/retry');
      expect(retried.body).toEqual({ ok: true, jobId: 'broken-1' });
      expect(['waiting', 'active', 'failed']).toContain(await job.getState());
      expect((await call('POST', '/admin/queue/turns/jobs/nope/retry')).body).toMatchObject({ error: 'JOB_NOT_FOUND' });
      expect((await call('POST', '/admin/queue/elsewhere/jobs/broken-1/retry')).body).toMatchObject({ error: 'QUEUE_NOT_FOUND' });
      const conversationId = await chat(9302);
      const [event] = await system.sql<{ id: string }[]>`select id from inbound_events where conversation_id = ${conversationId}`;
      const completed = await call('POST', `/admin/queue/turns/jobs/ev-${event?.id}/retry`);
      expect(completed.status).toBe(409);
      expect(completed.body).toMatchObject({ error: 'JOB_NOT_FAILED' });
    } finally {
      await events.close();
      await queue.close();
      connection.disconnect();
    }
  });

  it('lists undelivered outbox rows and retries a failed one until it is delivered', async () => {
    const conversationId = await chat(9303);
    const [sent] = await system.sql<{ target: Record<string, unknown> }[]>`select target from outbox where conversation_id = ${conversationId} limit 1`;
    const [row] = await system.sql<{ id: string }[]>`
      insert into outbox (conversation_id, platform, target, text, status, attempts, last_error)
      values (${conversationId}, 'telegram', ${JSON.stringify(sent?.target ?? {})}::jsonb, 'delivered on retry', 'failed', 10, 'UNAVAILABLE: simulated outage')
      returning id`;
    const id = Number(row?.id);
    const undelivered = await call<{ items: { id: number; status: string; lastError: string }[] }>('GET', '/admin/outbox');
    expect(undelivered.body.items).toEqual([expect.objectContaining({ id, status: 'failed', lastError: 'UNAVAILABLE: simulated outage' })]);
    expect((await call<{ items: unknown[] }>('GET', '/admin/outbox?status=pending')).body.items).toEqual([]);

    const retry = await call<{ outbox: { status: string; attempts: number } }>('POST', `/admin/outbox/${id}/retry`);
    expect(retry.status).toBe(200);
    expect(retry.body.outbox).toMatchObject({ status: 'pending', attempts: 0 });
    const messages = await system.waitForTelegram(9303, 2);
    expect(messages[1]?.text).toBe('delivered on retry');
    // Delivered: marking it sent follows the send; wait for the row rather than for time.
    await waitUntil(async () => (await system.sql`select 1 from outbox where id = ${id} and status = 'sent'`).length === 1, 'outbox row marked sent');
    const again = await call('POST', `/admin/outbox/${id}/retry`);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: 'ALREADY_SENT' });
    expect((await call('POST', '/admin/outbox/999999/retry')).status).toBe(404);
  });

  it('lists restart counters and suspended conversations', async () => {
    const looping = await chat(9304);
    const parked = await chat(9305);
    await system.sql`update conversations set restart_count = 2 where id = ${looping}`;
    await call('POST', `/admin/conversations/${parked}/suspend`, { reason: 'restart_loop' });
    const restarts = await call<{ counters: { id: number; restartCount: number }[]; suspended: { id: number; suspendReason: string }[] }>('GET', '/admin/restarts');
    expect(restarts.body.counters).toEqual([expect.objectContaining({ id: looping, restartCount: 2 })]);
    expect(restarts.body.suspended).toEqual([expect.objectContaining({ id: parked, suspendReason: 'restart_loop' })]);
  });

  it('exports Prometheus metrics on the gateway and the worker', async () => {
    await chat(9306);
    expect((await system.sendTelegram({ chatId: 9306, text: 'forged', secretToken: 'wrong' })).status).toBe(401);
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(valueOf(text, 'switchboard_inbound_events_total{platform="telegram",outcome="accepted"}')).toBeGreaterThanOrEqual(1);
    expect(valueOf(text, 'switchboard_inbound_events_total{platform="telegram",outcome="unauthorized"}')).toBe(1);
    expect(text).toMatch(/switchboard_queue_jobs\{queue="turns",state="waiting"\} \d+/);
    expect(valueOf(text, 'switchboard_conversations{state="suspended"}')).toBe(1);
    expect(valueOf(text, 'switchboard_admin_actions_total{action="conversation.suspend",result="ok"}')).toBe(1);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect(text).toMatch(/^process_resident_memory_bytes /m);

    const worker = system.workers[0] as RunningWorker;
    const workerText = await (await fetch(`${worker.url}/metrics`)).text();
    expect(valueOf(workerText, 'switchboard_deliveries_total{platform="telegram",outcome="sent"}')).toBeGreaterThanOrEqual(1);
    expect(workerText).toContain('switchboard_turn_duration_seconds_bucket');
    expect(workerText).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect(workerText).toMatch(/^process_resident_memory_bytes /m);
  });
});

function valueOf(metrics: string, series: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : Number.NaN;
}

/** Re-checks a condition until it holds; for state no event announces. */
async function waitUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
