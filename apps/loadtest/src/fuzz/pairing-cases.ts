import fc from 'fast-check';
import { discordAuth } from './discord-cases.ts';
import type { BuiltRequest, CaseContext, FuzzCase, FuzzClass } from './fuzz-types.ts';
import { arr, fuzzText, num, obj, raw, renderJson, str, type JsonNode } from './json-text.ts';
import { slackAuth } from './slack-cases.ts';
import { telegramAuth } from './telegram-cases.ts';
import { webhookCases, type WebhookSpec } from './webhook-cases.ts';

/**
 * Issue 30: the pairing flow (docs/admin.md, "Pairing"), for a gateway with
 * DM_POLICY=pairing and nobody allowlisted. Direct messages on each platform
 * from users who are not paired: a few squatters per platform who ask again
 * and again (more of them than there are slots, so they evict each other), a
 * new user per case, and user ids that are odd (unicode, huge, past 2^53,
 * empty); each signed or not, mutated or broken like any webhook case. And
 * the pairing admin routes: well-shaped codes no one was given, in every
 * spelling the route normalises, malformed codes, unknown users, bodies past
 * the limit. Every case's route is `pairing`; its platform is in `needs`.
 */

type Who = { w: 'squatter'; n: number } | { w: 'newcomer' } | { w: 'odd'; id: string };
type Dm = { who: Who; text: string };

/** More squatters than the slot cap (3): their re-requests evict one another, oldest first. */
const squatters = 5;

/** Long and without repeats, so Postgres cannot compress it under its index-row limit (about 2.7 kB), as it can 'UUU…'. */
const incompressibleId = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20_000))).join('');

const who: fc.Arbitrary<Who> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: squatters - 1 }).map((n): Who => ({ w: 'squatter', n })) },
  { weight: 3, arbitrary: fc.constant<Who>({ w: 'newcomer' }) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(fuzzText, fc.constantFrom('', ' ', '0', '-1', '9007199254740993', '1e400', '\u0000', '\ud800', '😀'.repeat(64), 'U'.repeat(10_000), incompressibleId, '１２３'))
      .map((id): Who => ({ w: 'odd', id })),
  },
);
const dm: fc.Arbitrary<Dm> = fc.record({ who, text: fuzzText });

/** The user id a case's DM comes from, as text: the same squatter ids all run long, a new one per newcomer. */
function userIdOf(who: Who, ctx: CaseContext, numeric: boolean): string {
  if (who.w === 'odd') return who.id;
  const base = who.w === 'squatter' ? `9${who.n}` : `8${String(ctx.seq).padStart(7, '0')}`;
  return numeric ? `${ctx.tag}${base}` : `UP${ctx.tag}${base}`;
}

/** Telegram ids are numbers: an odd id that is not one is written as a string, which the parser refuses. */
const telegramId = (id: string): JsonNode => (/^-?\d+(\.\d+)?(e\d+)?$/.test(id) ? raw(id) : str(id));

function telegramDm(v: Dm, ctx: CaseContext): JsonNode {
  const id = telegramId(userIdOf(v.who, ctx, true));
  const from = obj({ id, is_bot: raw('false'), first_name: str(v.text.slice(0, 64) || 'Pair'), language_code: str('en') });
  const message = obj({ message_id: num(ctx.seq + 1), date: num(1_700_000_000 + ctx.seq), chat: obj({ id, type: str('private') }), from, text: str(v.text) });
  return obj({ update_id: num(Number(ctx.tag) * 10_000_000 + 5_000_000 + ctx.seq), message });
}

function slackDm(v: Dm, ctx: CaseContext): JsonNode {
  const user = userIdOf(v.who, ctx, false);
  const ts = `${1_700_000_000 + ctx.seq}.${String(ctx.seq % 1_000_000).padStart(6, '0')}`;
  const event = obj({ type: str('message'), channel: str(`DP${user.slice(0, 200)}`), channel_type: str('im'), user: str(user), text: str(v.text), ts: str(ts), event_ts: str(ts) });
  return obj({ token: str('fuzz'), team_id: str(`TP${ctx.tag}`), api_app_id: str('AFUZZ'), event, type: str('event_callback'), event_id: str(`EvP${ctx.tag}${ctx.seq}`), event_time: num(1_700_000_000) });
}

/** A slash command in a DM with the bot (no guild): Discord's DMs themselves come over the Gateway connection, not this route. */
function discordDm(v: Dm, ctx: CaseContext): JsonNode {
  const snowflake = (prefix: number) => `${prefix}${ctx.tag.padStart(6, '0')}${String(ctx.seq).padStart(8, '0')}`;
  const user = obj({ id: str(userIdOf(v.who, ctx, true)), username: str('pair') });
  return obj({
    id: str(snowflake(25)),
    application_id: str(ctx.target.discord?.applicationId ?? '1'),
    type: num(2),
    token: str(`pair-token-${ctx.tag}-${ctx.seq}`),
    version: num(1),
    channel_id: str(snowflake(26)),
    channel: obj({ id: str(snowflake(26)), type: num(1) }),
    user,
    data: obj({ id: str(snowflake(27)), name: str('ask'), type: num(1), options: arr(obj({ name: str('text'), type: num(3), value: str(v.text) })) }),
  });
}

const common = { variant: dm, oddContentTypes: ['application/json; charset=utf-8', null], refusedContentTypes: ['text/html', 'application/octet-stream'] } as const;
const specs: WebhookSpec<Dm>[] = [
  {
    ...common,
    route: 'telegram',
    path: '/webhooks/telegram',
    tree: telegramDm,
    mutablePaths: [['message', 'from', 'id'], ['message', 'chat', 'id'], ['message', 'from'], ['message', 'text'], ['message', 'chat', 'type']],
    requiredPaths: [{ path: ['message', 'chat'], wrong: fc.constantFrom(raw('1'), raw('null')) }],
    textPath: ['message', 'text'],
    auth: telegramAuth,
  },
  {
    ...common,
    route: 'slack',
    path: '/webhooks/slack/events',
    tree: slackDm,
    mutablePaths: [['event', 'user'], ['event', 'channel'], ['event', 'channel_type'], ['event', 'text'], ['team_id']],
    requiredPaths: [{ path: ['event'], wrong: fc.constantFrom(raw('1'), raw('null'), raw('[]')) }],
    textPath: ['event', 'text'],
    auth: slackAuth,
  },
  {
    ...common,
    route: 'discord',
    path: '/webhooks/discord/interactions',
    tree: discordDm,
    mutablePaths: [['user'], ['user', 'id'], ['channel'], ['data', 'options']],
    requiredPaths: [{ path: ['type'], wrong: fc.constantFrom(str('2'), raw('null')) }],
    textPath: ['data', 'name'],
    auth: discordAuth,
  },
];

/** Mostly authentic DMs (the pairing flow is what is under test), the rest fuzzed like any webhook case. */
const dmCases: fc.Arbitrary<FuzzCase>[] = specs.map((spec) => {
  const cases = webhookCases(spec);
  return fc
    .oneof({ weight: 3, arbitrary: cases.filter((c) => c.cls === 'authentic') }, { weight: 1, arbitrary: cases })
    .map((c): FuzzCase => ({ ...c, route: 'pairing', needs: spec.route, kinds: [`platform:${spec.route}`, ...c.kinds] }));
});

// --- the pairing admin routes ------------------------------------------------

const alphabet = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
/** A code of the right shape (never one a user was given: 31^8 of them), spelled as an operator might: lower case, grouped, spaced. */
const wellShapedCode = fc
  .record({ chars: fc.array(fc.constantFrom(...alphabet), { minLength: 8, maxLength: 8 }), spelling: fc.constantFrom('plain', 'lower', 'dash', 'spaces') })
  .map(({ chars, spelling }) => {
    const code = chars.join('');
    if (spelling === 'lower') return code.toLowerCase();
    if (spelling === 'dash') return `${code.slice(0, 4)}-${code.slice(4)}`;
    return spelling === 'spaces' ? ` ${code.slice(0, 4)} ${code.slice(4)} ` : code;
  });
const malformedCode = fc.oneof(fuzzText.filter((t) => t.length > 0), fc.constantFrom('ABCDEFG', 'ABCDEFGHJ', 'O0I1LOIL', 'ABCD\u0000EFG', 'ＡＢＣＤＥＦＧＨ', '--------', 'A'.repeat(4000), '%', '..'));

type AdminCall = { op: 'approve' | 'deny'; code: string } | { op: 'list' } | { op: 'paired' } | { op: 'revoke'; platform: string; userId: string };
type AdminPlan = { call: AdminCall; cls: FuzzClass; body: 'none' | 'junk' | 'huge' | 'not-json' };

const adminCall: fc.Arbitrary<AdminCall> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constantFrom('approve' as const, 'deny' as const), code: fc.oneof(wellShapedCode, malformedCode) }) },
  { weight: 1, arbitrary: fc.constantFrom<AdminCall>({ op: 'list' }, { op: 'paired' }) },
  // A user never paired (a platform that is not one, or a squatter's id): 404, nothing revoked.
  { weight: 1, arbitrary: fc.record({ op: fc.constant('revoke' as const), platform: fc.constantFrom('telegram', 'slack', 'discord', 'nope', '😀'), userId: fc.oneof(fuzzText.filter((t) => t.length > 0), fc.constant('UP1')) }) },
);
const adminPlan: fc.Arbitrary<AdminPlan> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ call: adminCall, cls: fc.constant<FuzzClass>('authentic'), body: fc.constantFrom('none' as const, 'junk' as const) }) },
  { weight: 1, arbitrary: fc.record({ call: adminCall.filter((c) => c.op === 'approve' || c.op === 'deny'), cls: fc.constant<FuzzClass>('invalid'), body: fc.constantFrom('huge' as const, 'not-json' as const) }) },
  { weight: 1, arbitrary: fc.record({ call: adminCall, cls: fc.constant<FuzzClass>('unauthenticated'), body: fc.constant('none' as const) }) },
);

const encode = (text: string) => [...Buffer.from(text, 'utf8')].map((b) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');

function buildAdmin(plan: AdminPlan, ctx: CaseContext): BuiltRequest {
  const { call } = plan;
  const [method, path] =
    call.op === 'list'
      ? ['GET', '/admin/pairings']
      : call.op === 'paired'
        ? ['GET', '/admin/paired-users']
        : call.op === 'revoke'
          ? ['DELETE', `/admin/paired-users/${encode(call.platform)}/${encode(call.userId)}`]
          : ['POST', `/admin/pairings/${encode(call.code)}/${call.op}`];
  const token = ctx.target.admin?.tokens[0]?.token ?? 'no-admin-token-configured';
  const headers: [string, string][] = [['authorization', `Bearer ${plan.cls === 'unauthenticated' ? `${token}x` : token}`]];
  let body: Buffer | undefined;
  if (method === 'POST' && plan.body !== 'none') {
    const limit = ctx.target.bodyLimitBytes ?? 1024 * 1024;
    body = plan.body === 'huge' ? Buffer.alloc(limit + 1 + (ctx.seq % 4096), 0x20) : plan.body === 'not-json' ? Buffer.from('{"reason":') : Buffer.from(renderJson(obj({ reason: str('fuzz') })));
    headers.push(['content-type', 'application/json']);
  }
  return { method, path, headers, ...(body ? { body } : {}), transport: 'http', ...(plan.cls === 'unauthenticated' ? { guessing: true } : {}) };
}

const adminCases: fc.Arbitrary<FuzzCase> = adminPlan.map(
  (plan): FuzzCase => ({
    route: 'pairing',
    cls: plan.cls,
    needs: 'admin',
    kinds: ['admin-api', `pairing:${plan.call.op}`, ...(plan.cls === 'unauthenticated' ? ['bad-auth'] : []), ...(plan.body === 'huge' ? ['huge'] : plan.body === 'not-json' ? ['not-json'] : [])],
    build: (ctx) => buildAdmin(plan, ctx),
  }),
);

/** `pairing`: DMs from unpaired users on each platform, and the pairing admin routes, for a gateway with DM_POLICY=pairing. */
export const pairingCases: fc.Arbitrary<FuzzCase> = fc.oneof({ weight: 2, arbitrary: dmCases[0] as fc.Arbitrary<FuzzCase> }, { weight: 2, arbitrary: dmCases[1] as fc.Arbitrary<FuzzCase> }, { weight: 2, arbitrary: dmCases[2] as fc.Arbitrary<FuzzCase> }, { weight: 1, arbitrary: adminCases });
