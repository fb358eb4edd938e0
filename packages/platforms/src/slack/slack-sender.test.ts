import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PlatformError } from '../errors.ts';
import { escapeSlackText } from './escape-text.ts';
import { createSlackClient, createSlackSender, fetchSlackAuthInfo } from './slack-sender.ts';

interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

// A bare HTTP stub, so the error mapping is tested against exact wire answers.
let server: Server;
let apiUrl: string;
let answers: Answer[] = [];
const requests: Array<{ url: string; authorization: string | undefined; body: URLSearchParams }> = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      requests.push({ url: request.url ?? '', authorization: request.headers.authorization, body: new URLSearchParams(Buffer.concat(parts).toString('utf8')) });
      const answer = answers.shift() ?? { status: 200, body: { ok: true } };
      response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      response.end(JSON.stringify(answer.body));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  answers = [];
  requests.length = 0;
});

async function caught(promise: Promise<unknown>): Promise<PlatformError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlatformError);
  return error as PlatformError;
}

const sender = () => createSlackSender({ token: 'xoxb-test', apiUrl });

describe('createSlackSender', () => {
  it('posts to chat.postMessage in the thread and returns the ts', async () => {
    answers = [{ status: 200, body: { ok: true, channel: 'C1', ts: '1700000000.000100', message: { text: 'hi' } } }];
    const sent = await sender().sendText({ channel: 'C1', threadTs: '1699999999.000001' }, 'hi');
    expect(sent).toEqual({ platformMessageId: '1700000000.000100' });
    expect(requests[0]?.url).toBe('/api/chat.postMessage');
    expect(requests[0]?.authorization).toBe('Bearer xoxb-test');
    expect(Object.fromEntries(requests[0]!.body)).toMatchObject({ channel: 'C1', text: 'hi', thread_ts: '1699999999.000001' });
  });

  it('posts at the top level without a thread', async () => {
    answers = [{ status: 200, body: { ok: true, channel: 'D1', ts: '1.2' } }];
    await sender().sendText({ channel: 'D1' }, 'hi');
    expect(requests[0]?.body.has('thread_ts')).toBe(false);
  });

  it('maps a 429 to RATE_LIMITED with Retry-After, without retrying inside the SDK', async () => {
    answers = [{ status: 429, body: { ok: false, error: 'ratelimited' }, headers: { 'retry-after': '7' } }];
    const error = await caught(sender().sendText({ channel: 'C1' }, 'x'));
    expect([error.code, error.retryable, error.retryAfterMs]).toEqual(['RATE_LIMITED', true, 7000]);
    expect(requests).toHaveLength(1);
  });

  it('maps ok:false to REJECTED (or UNAVAILABLE for Slack-side trouble), HTTP and network failures to UNAVAILABLE', async () => {
    answers = [{ status: 200, body: { ok: false, error: 'channel_not_found' } }];
    expect((await caught(sender().sendText({ channel: 'C404' }, 'x'))).code).toBe('REJECTED');
    answers = [{ status: 200, body: { ok: false, error: 'internal_error' } }];
    expect((await caught(sender().sendText({ channel: 'C1' }, 'x'))).code).toBe('UNAVAILABLE');
    answers = [{ status: 503, body: { ok: false } }];
    expect((await caught(sender().sendText({ channel: 'C1' }, 'x'))).code).toBe('UNAVAILABLE');
    expect(requests).toHaveLength(3);
    const unreachable = createSlackSender({ token: 'xoxb-test', apiUrl: 'http://127.0.0.1:9/api/' });
    expect((await caught(unreachable.sendText({ channel: 'C1' }, 'x'))).code).toBe('UNAVAILABLE');
    expect((await caught(sender().sendText({}, 'x'))).code).toBe('REJECTED');
  });

  it('renders mrkdwn with &, < and > escaped, so model output cannot notify a channel or label a link its own way', async () => {
    answers = [{ status: 200, body: { ok: true, channel: 'C1', ts: '1.3' } }];
    await sender().sendText({ channel: 'C1' }, 'Hey <!channel> & <!here>, see <https://x.example|this> > **that**');
    // A Markdown autolink stays a link, its `|` encoded so it cannot become a label.
    expect(requests[0]?.body.get('text')).toBe('Hey &lt;!channel&gt; &amp; &lt;!here&gt;, see <https://x.example%7Cthis> &gt; *that*');
  });

  it('has no typing indicator and caps the limit so an escaped chunk fits Slack’s 40,000', async () => {
    const s = createSlackSender({ token: 't', apiUrl, messageLimit: 100_000 });
    expect([s.platform, s.typingIntervalMs, s.messageLimit, sender().messageLimit]).toEqual(['slack', 0, 8000, 4000]);
    // The worst case: a chunk of nothing but `&`, escaped, still fits.
    expect(escapeSlackText('&'.repeat(s.messageLimit)).length).toBeLessThanOrEqual(40_000);
    await expect(s.sendTyping({ channel: 'C1' })).resolves.toBeUndefined();
    expect(requests).toHaveLength(0);
  });
});

describe('fetchSlackAuthInfo', () => {
  it('reads user, bot and team ids from auth.test', async () => {
    answers = [{ status: 200, body: { ok: true, url: 'https://x.slack.com/', team: 'X', user: 'bot', team_id: 'T1', user_id: 'U1', bot_id: 'B1' } }];
    expect(await fetchSlackAuthInfo(await createSlackClient({ token: 'xoxb-test', apiUrl }))).toEqual({ userId: 'U1', botId: 'B1', teamId: 'T1' });
    answers = [{ status: 200, body: { ok: false, error: 'invalid_auth' } }];
    expect((await caught(fetchSlackAuthInfo(await createSlackClient({ token: 'xoxb-test', apiUrl })))).code).toBe('REJECTED');
  });
});
