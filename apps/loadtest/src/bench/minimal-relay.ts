/**
 * The benchmark's baseline: the least a Telegram bot can do per message —
 * webhook in, one model call, one sendMessage — with plain node:http and
 * fetch. No queue, no database, no ordering, no retries, nothing durable: it
 * acknowledges before it has done anything. Switchboard's throughput is
 * reported as a share of this one's, on the same machine and simulator.
 *
 * Environment: PORT, SIM_URL, TELEGRAM_BOT_TOKEN, TELEGRAM_WEBHOOK_SECRET.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';

const port = Number(process.env.PORT ?? 0);
const simUrl = (process.env.SIM_URL ?? 'http://127.0.0.1:4010').replace(/\/+$/, '');
const token = process.env.TELEGRAM_BOT_TOKEN ?? '';
const secret = Buffer.from(process.env.TELEGRAM_WEBHOOK_SECRET ?? '');

interface Update {
  message?: { chat?: { id?: number }; text?: string };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function hasSecret(request: IncomingMessage): boolean {
  const given = Buffer.from(String(request.headers['x-telegram-bot-api-secret-token'] ?? ''));
  return given.length === secret.length && timingSafeEqual(given, secret);
}

async function relay(chatId: number, text: string): Promise<void> {
  const completion = await fetch(`${simUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer relay' },
    body: JSON.stringify({ model: 'switchboard-sim', messages: [{ role: 'user', content: text }] }),
  });
  const body = (await completion.json()) as { choices?: { message?: { content?: string } }[] };
  const reply = body.choices?.[0]?.message?.content ?? '';
  if (!reply) return;
  await fetch(`${simUrl}/bot${token}/sendMessage`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ chat_id: chatId, text: reply }),
  });
}

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/readyz') {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    return;
  }
  if (request.method !== 'POST' || request.url !== '/webhooks/telegram') {
    response.writeHead(404).end();
    return;
  }
  if (!hasSecret(request)) {
    response.writeHead(401).end();
    return;
  }
  readBody(request).then(
    (raw) => {
      let update: Update;
      try {
        update = JSON.parse(raw) as Update;
      } catch {
        response.writeHead(400).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      const chatId = update.message?.chat?.id;
      const text = update.message?.text;
      if (chatId === undefined || !text) return;
      relay(chatId, text).catch((error: unknown) => console.error(`relay: ${error instanceof Error ? error.message : String(error)}`));
    },
    () => response.writeHead(400).end(),
  );
});

server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  console.log(`minimal relay listening on ${typeof address === 'object' && address ? address.port : port}`);
});
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
