import fc from 'fast-check';
import type { CaseContext, FuzzCase } from './fuzz-types.ts';
import { arr, fuzzText, num, obj, raw, str, type JsonNode } from './json-text.ts';
import { webhookCases, type AuthVariant } from './webhook-cases.ts';

type Variant = {
  shape:
    | 'private'
    | 'group-command'
    | 'group-reply-to-bot'
    | 'group-not-addressed'
    | 'topic'
    | 'edited'
    | 'channel-post'
    | 'callback'
    | 'bot-author'
    | 'sticker'
    // Issue 30: the newer inputs. An approval press with a well-formed payload (so it reaches the decision), an
    // approval answer typed in chat, and files (a document, a photo, a voice message) whose ids, sizes and types are fuzzed.
    | 'approval-press'
    | 'approval-command'
    | 'document'
    | 'photo'
    | 'voice';
  text: string;
};

const secretOf = (ctx: CaseContext) => ctx.target.telegram?.webhookSecret ?? '';
const header = 'x-telegram-bot-api-secret-token';

/** The webhook's secret token (DESIGN §4): right, and wrong by a byte, a case, a repeat or a byte no HTTP client sends. */
export const telegramAuth: readonly AuthVariant[] = [
  { name: 'valid', valid: true, weight: 4, headers: (_b, ctx) => ({ [header]: secretOf(ctx) }) },
  // HTTP strips the whitespace around a header value, so this is the secret as sent.
  { name: 'valid-padded', valid: true, raw: true, headers: (_b, ctx) => [[header, ` \t${secretOf(ctx)} \t`]] },
  { name: 'none', valid: false, headers: () => ({}) },
  { name: 'empty', valid: false, headers: () => ({ [header]: '' }) },
  { name: 'wrong', valid: false, headers: () => ({ [header]: 'not-the-secret' }) },
  { name: 'case-flipped', valid: false, headers: (_b, ctx) => ({ [header]: flipCase(secretOf(ctx)) }) },
  { name: 'prefix', valid: false, headers: (_b, ctx) => ({ [header]: secretOf(ctx).slice(0, -1) }) },
  { name: 'suffix', valid: false, headers: (_b, ctx) => ({ [header]: `${secretOf(ctx)}x` }) },
  { name: 'duplicate-header', valid: false, raw: true, headers: (_b, ctx) => [[header, secretOf(ctx)], [header, secretOf(ctx)]] },
  { name: 'latin1-byte', valid: false, raw: true, headers: (_b, ctx) => [[header, `${secretOf(ctx)}\u00e9`]] },
  { name: 'nul-byte', valid: false, raw: true, headers: (_b, ctx) => [[header, `${secretOf(ctx)}\u0000`]] },
];

function flipCase(text: string): string {
  const flipped = [...text].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
  return flipped === text ? `${text}X` : flipped;
}

const variant: fc.Arbitrary<Variant> = fc.record({
  shape: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('private' as const, 'group-command' as const, 'group-reply-to-bot' as const, 'topic' as const) },
    { weight: 2, arbitrary: fc.constantFrom('group-not-addressed' as const, 'edited' as const, 'channel-post' as const, 'callback' as const, 'bot-author' as const, 'sticker' as const) },
    { weight: 3, arbitrary: fc.constantFrom('approval-press' as const, 'approval-command' as const, 'document' as const, 'photo' as const, 'voice' as const) },
  ),
  text: fuzzText,
});

function tree(v: Variant, ctx: CaseContext): JsonNode {
  const tag = Number(ctx.tag);
  const updateId = tag * 10_000_000 + ctx.seq;
  const userId = 7_000_000_000 + (tag % 1000) * 1_000_000 + ctx.seq;
  const inGroup = v.shape.startsWith('group') || v.shape === 'topic';
  const chatId = inGroup ? -(1_000_000_000_000 + (tag % 1000) * 1_000_000 + ctx.seq) : userId;
  const botId = ctx.target.telegram?.botId ?? '123456';
  const from = obj({ id: num(userId), is_bot: raw(v.shape === 'bot-author' ? 'true' : 'false'), first_name: str('Fuzz'), username: str(`fuzz${ctx.seq}`), language_code: str('en') });
  const message = obj({
    message_id: num(ctx.seq + 1),
    date: num(1_700_000_000 + ctx.seq),
    chat: obj({ id: num(chatId), type: str(v.shape === 'channel-post' ? 'channel' : v.shape === 'topic' ? 'supergroup' : inGroup ? 'group' : 'private'), title: inGroup ? str('Fuzz group') : undefined }),
    from: v.shape === 'channel-post' ? undefined : from,
    text: v.shape === 'sticker' ? undefined : str(v.shape === 'group-command' ? `/ask ${v.text}` : v.text),
    sticker: v.shape === 'sticker' ? obj({ file_id: str('CAAC'), width: num(512), height: num(512) }) : undefined,
    message_thread_id: v.shape === 'topic' ? num(42) : undefined,
    is_topic_message: v.shape === 'topic' ? raw('true') : undefined,
    reply_to_message:
      v.shape === 'group-reply-to-bot' || v.shape === 'topic'
        ? obj({ message_id: num(ctx.seq), date: num(1_700_000_000), chat: obj({ id: num(chatId), type: str('group') }), from: obj({ id: raw(botId), is_bot: raw('true'), first_name: str('Bot') }) })
        : undefined,
  });
  if (v.shape === 'callback') return obj({ update_id: num(updateId), callback_query: obj({ id: str(String(ctx.seq)), from, data: str(v.text), chat_instance: str('1') }) });
  if (v.shape === 'approval-press') {
    const pressed = obj({ message_id: num(ctx.seq + 1), date: num(1_700_000_000), chat: obj({ id: num(chatId), type: str('private') }), text: str('Approval needed') });
    return obj({ update_id: num(updateId), callback_query: obj({ id: str(String(ctx.seq)), from, message: pressed, data: str(approvalPayloadOf(v.text, ctx.seq)), chat_instance: str('1') }) });
  }
  if (v.shape === 'approval-command') message.entries = message.entries.map(([key, value]) => [key, key === 'text' ? str(approvalCommandOf(v.text, ctx.seq)) : value]);
  if (v.shape === 'document' || v.shape === 'photo' || v.shape === 'voice') message.entries.push(...fileEntries(v, ctx.seq));
  if (v.shape === 'edited') return obj({ update_id: num(updateId), edited_message: message });
  if (v.shape === 'channel-post') return obj({ update_id: num(updateId), message });
  return obj({ update_id: num(updateId), message });
}

/** `apv:<token>:<choice>`: well-formed most of the time (a token no question has), sometimes cut or with another letter. */
function approvalPayloadOf(text: string, seq: number): string {
  const token = `fz${seq.toString(36)}${[...text].filter((c) => /[A-Za-z0-9_-]/.test(c)).join('')}`.padEnd(8, 'x').slice(0, 48);
  const choice = 'asdx'[seq % 4] as string;
  return seq % 5 === 0 ? `apv:${token}` : `apv:${token}:${choice}`;
}

/** `/approve`, `/approve session`, `/approve <6 digits>`, `/deny`, or `/approve` with fuzzed words. */
function approvalCommandOf(text: string, seq: number): string {
  const forms = ['/approve', '/approve session', `/approve ${String(seq % 1_000_000).padStart(6, '0')}`, '/deny', `/approve ${text}`];
  return forms[seq % forms.length] as string;
}

/** A file on the message: ids, sizes, names and types from the fuzzer (the worker downloads through the simulator, which knows none of them). */
function fileEntries(v: Variant, seq: number): [string, JsonNode][] {
  const size = [0, 1, 4096, 5 * 1024 * 1024 + 1, 2 ** 31][seq % 5] as number;
  if (v.shape === 'photo') return [['photo', arr(obj({ file_id: str(`fz-photo-${v.text.slice(0, 40)}`), file_unique_id: str(`u${seq}`), width: num(64), height: num(64), file_size: num(size) }))]];
  if (v.shape === 'voice') return [['voice', obj({ file_id: str(`fz-voice-${seq}`), file_unique_id: str(`v${seq}`), duration: num(seq % 120), mime_type: str('audio/ogg'), file_size: num(size) })]];
  return [['document', obj({ file_id: str(`fz-doc-${seq}`), file_unique_id: str(`d${seq}`), file_name: str(v.text.slice(0, 80) || 'fuzz.txt'), mime_type: str(['text/plain', 'application/pdf', v.text.slice(0, 30)][seq % 3] as string), file_size: num(size) })]];
}

const notAnInteger = fc.constantFrom(str('1'), raw('1.5'), raw('null'), raw('true'), raw('[]'), raw('{}'), raw('1e400'), str('9007199254740993'));
const notAnObject = fc.constantFrom(raw('1'), raw('null'), str('chat'), raw('[]'));

/** `POST /webhooks/telegram`: Bot API Updates, with the secret token and without. */
export const telegramCases: fc.Arbitrary<FuzzCase> = webhookCases<Variant>({
  route: 'telegram',
  path: '/webhooks/telegram',
  variant,
  tree,
  mutablePaths: [
    ['update_id'],
    ['message', 'message_id'],
    ['message', 'date'],
    ['message', 'text'],
    ['message', 'chat'],
    ['message', 'chat', 'id'],
    ['message', 'chat', 'type'],
    ['message', 'from'],
    ['message', 'from', 'id'],
    ['message', 'from', 'is_bot'],
    ['message', 'from', 'username'],
    ['message', 'message_thread_id'],
    ['message', 'is_topic_message'],
    ['message', 'reply_to_message'],
    ['message', 'reply_to_message', 'from', 'id'],
    ['message', 'entities'],
  ],
  requiredPaths: [
    { path: ['update_id'], wrong: fc.oneof(notAnInteger, fc.constant(raw('-1'))) },
    { path: ['message', 'message_id'], wrong: notAnInteger },
    { path: ['message', 'date'], wrong: notAnInteger },
    { path: ['message', 'chat'], wrong: notAnObject },
    { path: ['message', 'chat', 'id'], wrong: notAnInteger },
    // An unknown chat.type is 400 today; issue 17 defect 9 makes it an acknowledged, ignored update. Either way nothing is stored.
    { path: ['message', 'chat', 'type'], wrong: fc.constantFrom(str('bogus'), str(''), raw('1'), raw('null'), str('PRIVATE')) },
    { path: ['message', 'from', 'id'], wrong: notAnInteger },
  ],
  textPath: ['message', 'text'],
  auth: telegramAuth,
  oddContentTypes: ['application/json; charset=utf-8', 'Application/JSON', 'text/plain', null, 'application/json; charset=utf-16le', 'application/jsonx'],
  refusedContentTypes: ['text/html', 'application/octet-stream', 'multipart/form-data; boundary=fuzz', 'image/png', 'application/x-www-form-urlencoded'],
});
