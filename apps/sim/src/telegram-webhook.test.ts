import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Api } from 'grammy';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSim, type Sim, type TelegramUpdate } from './index.ts';

const token = '777:webhook-test';
const secret = 'gateway_Secret-1';

interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
}

/** A stand-in gateway: records each POST and answers with the next scripted status (200 once the script runs out). */
class FakeGateway {
  readonly received: Received[] = [];
  statuses: number[] = [];
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on('data', (part: Buffer) => parts.push(part));
      request.on('end', () => {
        this.received.push({ headers: request.headers, raw: Buffer.concat(parts).toString('utf8') });
        const status = this.statuses.shift() ?? 200;
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ status }));
      });
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhooks/telegram`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

let gateway: FakeGateway;
let webhookUrl: string;
let sim: Sim;
let baseUrl: string;

beforeAll(async () => {
  gateway = new FakeGateway();
  webhookUrl = await gateway.start();
  sim = await createSim({ telegramBotToken: token, telegramWebhookUrl: webhookUrl, telegramWebhookSecret: secret, logLevel: 'silent' });
  baseUrl = await sim.listen(0);
});

afterAll(async () => {
  await sim.close();
  await gateway.stop();
});

afterEach(() => {
  sim.reset();
  gateway.received.length = 0;
  gateway.statuses = [];
});

async function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe('webhook delivery', () => {
  it('POSTs a real Update with the secret header and reports the gateway answer', async () => {
    const { status, json } = await post('/control/telegram/updates', { chat: { id: 3001 }, from: { id: 3001, first_name: 'Bea', username: 'bea' }, text: 'hello' });
    expect(status).toBe(200);
    expect(json).toMatchObject({ delivered: true, status: 200, body: { status: 200 } });
    expect(typeof json.ackMs).toBe('number');

    expect(gateway.received).toHaveLength(1);
    const [request] = gateway.received;
    expect(request?.headers['x-telegram-bot-api-secret-token']).toBe(secret);
    expect(request?.headers['content-type']).toBe('application/json');
    const update = JSON.parse(request?.raw ?? '') as TelegramUpdate;
    expect(update).toEqual(json.update);
    expect(update).toEqual({
      update_id: expect.any(Number),
      message: {
        message_id: 1,
        from: { id: 3001, is_bot: false, first_name: 'Bea', username: 'bea' },
        chat: { id: 3001, type: 'private', first_name: 'Bea', username: 'bea' },
        date: expect.any(Number),
        text: 'hello',
      },
    });
  });

  it('keeps a 503-answered update undelivered and redelivers the same bytes and header', async () => {
    gateway.statuses = [503];
    const first = await post('/control/telegram/updates', { chat: { id: 3002 }, text: 'try me' });
    expect(first.json).toMatchObject({ delivered: false, status: 503 });
    const update = first.json.update as TelegramUpdate;

    const undelivered = await fetch(`${baseUrl}/control/telegram/undelivered`).then((response) => response.json());
    expect(undelivered).toEqual([update]);

    const redelivered = await post('/control/telegram/redeliver', {});
    expect(redelivered.json).toEqual([{ update_id: update.update_id, status: 200, body: { status: 200 }, ackMs: expect.any(Number), postedAt: expect.any(Number) }]);
    expect(gateway.received).toHaveLength(2);
    expect(gateway.received[1]?.raw).toBe(gateway.received[0]?.raw);
    expect(gateway.received[1]?.headers['x-telegram-bot-api-secret-token']).toBe(secret);

    const after = await fetch(`${baseUrl}/control/telegram/undelivered`).then((response) => response.json());
    expect(after).toEqual([]);
  });

  it('redelivers one chosen update and keeps the others in order', async () => {
    gateway.statuses = [500, 500, 500];
    const a = (await post('/control/telegram/updates', { chat: { id: 3003 }, text: 'a' })).json.update as TelegramUpdate;
    const b = (await post('/control/telegram/updates', { chat: { id: 3003 }, text: 'b' })).json.update as TelegramUpdate;
    const one = await post('/control/telegram/redeliver', { update_id: b.update_id });
    expect(one.json).toMatchObject([{ update_id: b.update_id, status: 500 }]);
    const all = await post('/control/telegram/redeliver', {});
    expect((all.json as unknown as Array<{ update_id: number; status: number }>).map((result) => [result.update_id, result.status])).toEqual([
      [a.update_id, 200],
      [b.update_id, 200],
    ]);
    const unknown = await post('/control/telegram/redeliver', { update_id: 1 });
    expect(unknown.status).toBe(404);
  });

  it('sends a test-chosen secret, or none, when asked to', async () => {
    await post('/control/telegram/updates', { chat: { id: 3004 }, text: 'x', secret_token: 'wrong' });
    await post('/control/telegram/updates', { chat: { id: 3004 }, text: 'y', secret_token: null });
    expect(gateway.received.map((request) => request.headers['x-telegram-bot-api-secret-token'])).toEqual(['wrong', undefined]);
  });

  it('keeps an update undelivered when the gateway cannot be reached', async () => {
    const api = new Api(token, { apiRoot: baseUrl });
    await api.setWebhook('http://127.0.0.1:9/unreachable', { secret_token: 'other' });
    const { json } = await post('/control/telegram/updates', { chat: { id: 3005 }, text: 'lost?' });
    expect(json).toMatchObject({ delivered: false, status: 0 });
    expect(json.error).toMatch(/^ECONNREFUSED: /);
    const info = await api.getWebhookInfo();
    expect(info).toMatchObject({ url: 'http://127.0.0.1:9/unreachable', pending_update_count: 1 });
    expect(info.last_error_message).toBeTruthy();

    // Switching to getUpdates hands the undelivered update over, as Telegram does.
    await api.deleteWebhook();
    const updates = await api.getUpdates({ timeout: 0 });
    expect(updates.map((update) => update.message?.text)).toEqual(['lost?']);
  });

  it('uses the webhook and secret set through setWebhook', async () => {
    const api = new Api(token, { apiRoot: baseUrl });
    await api.setWebhook(webhookUrl, { secret_token: 'rotated_secret' });
    await post('/control/telegram/updates', { chat: { id: 3006 }, text: 'rotated' });
    expect(gateway.received[0]?.headers['x-telegram-bot-api-secret-token']).toBe('rotated_secret');
  });
});
