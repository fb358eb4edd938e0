import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import type { CaseContext, FuzzCase } from './fuzz-types.ts';
import { arr, fuzzText, num, obj, raw, str, type JsonNode } from './json-text.ts';
import { webhookCases, type AuthVariant } from './webhook-cases.ts';

type Variant =
  | { shape: 'dm' | 'dm-thread' | 'mention' | 'mention-thread' | 'bot' | 'subtype' | 'other-event' | 'channel-message' | 'files' | 'approval-command'; text: string }
  | { shape: 'url-verification'; challenge: string };

function slackSign(secret: string, timestamp: string, body: Buffer): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:`).update(body).digest('hex')}`;
}

const secretOf = (ctx: CaseContext) => ctx.target.slack?.signingSecret ?? '';
const seconds = (ctx: CaseContext, offset = 0) => String(Math.floor(ctx.nowMs / 1000) + offset);

const valid = (name: string, options: { offset?: number; upper?: boolean; retry?: boolean; weight?: number } = {}): AuthVariant => ({
  name,
  valid: true,
  weight: options.weight ?? 1,
  headers: (body, ctx) => {
    const timestamp = seconds(ctx, options.offset);
    const signature = slackSign(secretOf(ctx), timestamp, body);
    return {
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': options.upper ? `v0=${signature.slice(3).toUpperCase()}` : signature,
      ...(options.retry ? { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' } : {}),
    };
  },
});

const invalid = (name: string, headers: AuthVariant['headers'], rawTransport = false): AuthVariant => ({ name, valid: false, raw: rawTransport, headers });

/** Slack's v0 signature (PLATFORMS.md §1.1): right, and wrong in every way a forger or a broken proxy might get it wrong. */
export const slackAuth: readonly AuthVariant[] = [
  valid('valid', { weight: 4 }),
  valid('valid-upper-hex', { upper: true }),
  valid('valid-skew-past', { offset: -240 }),
  valid('valid-skew-future', { offset: 240 }),
  valid('valid-retry', { retry: true }),
  invalid('none', () => ({})),
  invalid('timestamp-only', (_b, ctx) => ({ 'x-slack-request-timestamp': seconds(ctx) })),
  invalid('signature-only', (b, ctx) => ({ 'x-slack-signature': slackSign(secretOf(ctx), seconds(ctx), b) })),
  invalid('wrong-secret', (b, ctx) => ({ 'x-slack-request-timestamp': seconds(ctx), 'x-slack-signature': slackSign(`${secretOf(ctx)}x`, seconds(ctx), b) })),
  invalid('tampered', (b, ctx) => ({ 'x-slack-request-timestamp': seconds(ctx), 'x-slack-signature': slackSign(secretOf(ctx), seconds(ctx), Buffer.concat([b, Buffer.from(' ')])) })),
  invalid('stale', (b, ctx) => ({ 'x-slack-request-timestamp': seconds(ctx, -301), 'x-slack-signature': slackSign(secretOf(ctx), seconds(ctx, -301), b) })),
  invalid('far-future', (b, ctx) => ({ 'x-slack-request-timestamp': seconds(ctx, 86_400), 'x-slack-signature': slackSign(secretOf(ctx), seconds(ctx, 86_400), b) })),
  invalid('other-timestamp', (b, ctx) => ({ 'x-slack-request-timestamp': seconds(ctx, 1), 'x-slack-signature': slackSign(secretOf(ctx), seconds(ctx), b) })),
  invalid('malformed-timestamp', (b, ctx) => {
    const timestamp = ['abc', '1e9', '-1', `${seconds(ctx)}.5`, '9999999999999', ` ${seconds(ctx)}x`][ctx.seq % 6] as string;
    return { 'x-slack-request-timestamp': timestamp, 'x-slack-signature': slackSign(secretOf(ctx), timestamp, b) };
  }),
  invalid('malformed-signature', (b, ctx) => {
    const good = slackSign(secretOf(ctx), seconds(ctx), b);
    const bad = [`v1=${good.slice(3)}`, good.slice(0, -1), `${good}0`, `v0=${'g'.repeat(64)}`, good.slice(3), 'v0=', `V0=${good.slice(3)}`][ctx.seq % 7] as string;
    return { 'x-slack-request-timestamp': seconds(ctx), 'x-slack-signature': bad };
  }),
  // Two signature lines: Node joins them with ", ", which is no signature at all.
  invalid(
    'duplicate-header',
    (b, ctx) => [
      ['x-slack-request-timestamp', seconds(ctx)],
      ['x-slack-signature', slackSign(secretOf(ctx), seconds(ctx), b)],
      ['x-slack-signature', slackSign(secretOf(ctx), seconds(ctx), b)],
    ],
    true,
  ),
];

const variant: fc.Arbitrary<Variant> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ shape: fc.constantFrom('dm' as const, 'dm-thread' as const, 'mention' as const, 'mention-thread' as const), text: fuzzText }) },
  { weight: 2, arbitrary: fc.record({ shape: fc.constantFrom('bot' as const, 'subtype' as const, 'other-event' as const, 'channel-message' as const), text: fuzzText }) },
  { weight: 1, arbitrary: fc.record({ shape: fc.constant('url-verification' as const), challenge: fuzzText }) },
  // Issue 30: files in a DM (hosted, remote on any host, oversized, fuzzed types) and approval answers typed in chat.
  { weight: 2, arbitrary: fc.record({ shape: fc.constantFrom('files' as const, 'approval-command' as const), text: fuzzText }) },
);

/** `/approve`, `/approve session`, `/approve <6 digits>`, `/deny`, or `/approve` with fuzzed words. */
function approvalCommandOf(text: string, seq: number): string {
  const forms = ['/approve', '/approve session', `/approve ${String(seq % 1_000_000).padStart(6, '0')}`, '/deny', `/approve ${text}`];
  return forms[seq % forms.length] as string;
}

/** Slack file objects: hosted on files.slack.com, remote (`mode: external`) on any host, oversized, or of a fuzzed type; none exists. */
function filesOf(text: string, seq: number): JsonNode {
  const host = ['https://files.slack.com', 'https://evil.example', 'http://127.0.0.1:1', 'http://169.254.169.254'][seq % 4] as string;
  const file = obj({
    id: str(`FFZ${seq}`),
    name: str(text.slice(0, 80) || 'fuzz.txt'),
    mimetype: str(['text/plain', 'image/png', 'audio/mp4', text.slice(0, 30)][seq % 4] as string),
    size: num([10, 5 * 1024 * 1024 + 1, 2 ** 40][seq % 3] as number),
    mode: str(seq % 3 === 0 ? 'external' : 'hosted'),
    url_private: str(`${host}/files-pri/T/F${seq}/x`),
    url_private_download: seq % 2 === 0 ? str(`${host}/files-pri/T/F${seq}/download/x`) : undefined,
  });
  return arr(file);
}

function tree(v: Variant, ctx: CaseContext): JsonNode {
  const id = `${ctx.tag}${String(ctx.seq).padStart(7, '0')}`;
  if (v.shape === 'url-verification') return obj({ token: str('fuzz'), challenge: str(v.challenge), type: str('url_verification') });
  const ts = `${1_700_000_000 + ctx.seq}.${String(ctx.seq % 1_000_000).padStart(6, '0')}`;
  const inChannel = v.shape === 'mention' || v.shape === 'mention-thread' || v.shape === 'channel-message';
  const event = obj({
    type: str(v.shape === 'mention' || v.shape === 'mention-thread' ? 'app_mention' : v.shape === 'other-event' ? 'reaction_added' : 'message'),
    channel: str(`${inChannel ? 'C' : 'D'}F${id}`),
    channel_type: v.shape.startsWith('mention') ? undefined : str(inChannel ? 'channel' : 'im'),
    user: str(`UF${id}`),
    text: str(v.shape.startsWith('mention') ? `<@UFUZZBOT> ${v.text}` : v.shape === 'approval-command' ? approvalCommandOf(v.text, ctx.seq) : v.text),
    files: v.shape === 'files' ? filesOf(v.text, ctx.seq) : undefined,
    ts: str(ts),
    thread_ts: v.shape.endsWith('thread') ? str(`${1_600_000_000 + ctx.seq}.000100`) : undefined,
    bot_id: v.shape === 'bot' ? str('BFUZZ') : undefined,
    subtype: v.shape === 'subtype' ? str('message_changed') : undefined,
    event_ts: str(ts),
  });
  return obj({
    token: str('fuzz-verification-token'),
    team_id: str(`TF${ctx.tag}`),
    api_app_id: str('AFUZZ'),
    event,
    type: str('event_callback'),
    event_id: str(`EvF${id}`),
    event_time: num(1_700_000_000 + ctx.seq),
    authorizations: arr(obj({ team_id: str(`TF${ctx.tag}`), user_id: str('UFUZZBOT'), is_bot: raw('true') })),
  });
}

const notAString = fc.constantFrom(raw('1'), raw('null'), raw('true'), raw('[]'), raw('{}'), raw('9007199254740993'), str(''));
const notAnObject = fc.constantFrom(raw('1'), raw('null'), raw('"event"'), raw('[]'), raw('[{}]'));

/** `POST /webhooks/slack/events`: Events API envelopes, signed and not. */
export const slackCases: fc.Arbitrary<FuzzCase> = webhookCases<Variant>({
  route: 'slack',
  path: '/webhooks/slack/events',
  variant,
  tree,
  mutablePaths: [
    ['type'],
    ['team_id'],
    ['event_id'],
    ['api_app_id'],
    ['event_time'],
    ['authorizations'],
    ['challenge'],
    ['event', 'type'],
    ['event', 'channel'],
    ['event', 'channel_type'],
    ['event', 'user'],
    ['event', 'text'],
    ['event', 'ts'],
    ['event', 'thread_ts'],
    ['event', 'subtype'],
    ['event', 'bot_id'],
  ],
  requiredPaths: [
    { path: ['type'], wrong: notAString },
    { path: ['team_id'], wrong: notAString },
    { path: ['event_id'], wrong: notAString },
    { path: ['event'], wrong: notAnObject },
    { path: ['event', 'type'], wrong: notAString },
  ],
  textPath: ['event', 'text'],
  auth: slackAuth,
  oddContentTypes: ['application/json; charset=utf-8', 'Application/JSON', 'application/x-www-form-urlencoded', 'text/plain', null, 'application/json; charset=utf-16le', 'application/jsonx'],
  refusedContentTypes: ['text/html', 'application/octet-stream', 'multipart/form-data; boundary=fuzz', 'image/png', 'application/xml'],
});
