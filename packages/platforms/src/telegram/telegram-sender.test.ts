import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PlatformError } from '../errors.ts';
import { createTelegramSender } from './telegram-sender.ts';

/** A stand-in Bot API that answers each sendMessage with the next scripted reply and records what it got. */
async function startBotApi(replies: { status: number; body: unknown }[]): Promise<{ url: string; calls: Record<string, unknown>[]; server: Server }> {
  const calls: Record<string, unknown>[] = [];
  const server = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk) => (raw += chunk));
    request.on('end', () => {
      calls.push(JSON.parse(raw || '{}') as Record<string, unknown>);
      const reply = replies.shift() ?? { status: 500, body: { ok: false, error_code: 500, description: 'no more replies' } };
      response.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, server };
}

const message = { ok: true, result: { message_id: 77, date: 1, chat: { id: 5, type: 'private' }, text: 'x' } };
let open: Server | undefined;
afterEach(() => open?.close());

describe('createTelegramSender', () => {
  it('sends HTML, and resends the same words as plain text when Telegram refuses the formatting', async () => {
    const api = await startBotApi([
      { status: 400, body: { ok: false, error_code: 400, description: "Bad Request: can't parse entities: unsupported start tag" } },
      { status: 200, body: message },
    ]);
    open = api.server;
    const sender = createTelegramSender({ token: '1:abc', apiRoot: api.url });
    expect(await sender.sendText({ chatId: 5 }, 'a **b** <c>')).toEqual({ platformMessageId: '77' });
    expect(api.calls).toEqual([
      { chat_id: 5, text: 'a <b>b</b> &lt;c&gt;', parse_mode: 'HTML' },
      { chat_id: 5, text: 'a **b** <c>' },
    ]);
  });

  it('edits a streamed reply in HTML; an edit to the text it already has is done, not an error', async () => {
    const notModified = { status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: message is not modified: specified new message content and reply markup are exactly the same' } };
    const api = await startBotApi([{ status: 200, body: message }, notModified]);
    open = api.server;
    const sender = createTelegramSender({ token: '1:abc', apiRoot: api.url });
    await sender.editText?.({ chatId: 5 }, '77', 'a **b** …');
    await expect(sender.editText?.({ chatId: 5 }, '77', 'a **b** …')).resolves.toBeUndefined();
    expect(api.calls).toEqual([
      { chat_id: 5, message_id: 77, text: 'a <b>b</b> …', parse_mode: 'HTML' },
      { chat_id: 5, message_id: 77, text: 'a <b>b</b> …', parse_mode: 'HTML' },
    ]);
  });

  it('maps 429 to RATE_LIMITED with the retry time Telegram asked for', async () => {
    const api = await startBotApi([{ status: 429, body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 3', parameters: { retry_after: 3 } } }]);
    open = api.server;
    const sender = createTelegramSender({ token: '1:abc', apiRoot: api.url });
    const error = await sender.sendText({ chatId: 5 }, 'hi').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 3000, retryable: true });
  });
});
