import { createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { BuiltRequest, CaseContext, FuzzCase, FuzzClass } from './fuzz-types.ts';
import { readableId, refusedId, unreachableId, type RouteShape } from './admin-route-shape.ts';
import { anyValue, bigNumberText, deepNode, fuzzText, notAnObjectBody, obj, raw, renderJson, str, type JsonNode } from './json-text.ts';
import { scheduleBaseBody, scheduleRoutes } from './schedule-route-shapes.ts';

/**
 * The admin API (docs/admin.md): every route, with credentials right and
 * wrong, ids and queries right, odd and wrong, bodies of every shape.
 *
 * Actions that change something (suspend, reset, delete, retry, ...) are only
 * ever sent, with valid credentials, for ids past 2^40 in every spelling the
 * schema converts (`+1099511627776`, `1099511627776.9`, ...), so the fuzzer
 * can run against a gateway that serves real conversations (the chaos run)
 * without touching one: it only ever gets "not found".
 */

interface AdminCredential {
  name: string;
  valid: boolean;
  headers(ctx: CaseContext, host: string): [string, string][];
  /** Sent as `?token=` (the events stream takes it there). */
  queryToken?(ctx: CaseContext): string;
}

const cookieName = 'sb_admin_session';

/** The session cookie as POST /admin/session makes it: `name.expiry.mac`, the MAC keyed by the actor's token (admin-session-cookie.ts). */
function sessionCookie(name: string, token: string, expiresAt: number): string {
  const payload = `${name}.${expiresAt}`;
  return `${payload}.${createHmac('sha256', token).update(payload).digest('base64url')}`;
}

const tokens = (ctx: CaseContext) => ctx.target.admin?.tokens ?? [{ name: 'admin', token: 'no-admin-token-configured' }];
const first = (ctx: CaseContext) => tokens(ctx)[0] as { name: string; token: string };
const second = (ctx: CaseContext) => tokens(ctx)[1] ?? first(ctx);
const cookieHeader = (value: string, around = false): [string, string] => ['cookie', around ? `theme=dark; ${cookieName}=${encodeURIComponent(value)}; other=%ZZ` : `${cookieName}=${encodeURIComponent(value)}`];

export const adminCredentials: readonly AdminCredential[] = [
  { name: 'bearer', valid: true, headers: (ctx) => [['authorization', `Bearer ${first(ctx).token}`]] },
  { name: 'bearer-second-token', valid: true, headers: (ctx) => [['authorization', `Bearer ${second(ctx).token}`]] },
  { name: 'bearer-lowercase-scheme', valid: true, headers: (ctx) => [['authorization', `bearer ${first(ctx).token}`]] },
  { name: 'bearer-extra-spaces', valid: true, headers: (ctx) => [['authorization', `Bearer    ${first(ctx).token}   `]] },
  { name: 'cookie', valid: true, headers: (ctx) => [cookieHeader(sessionCookie(first(ctx).name, first(ctx).token, ctx.nowMs + 3_600_000))] },
  { name: 'cookie-among-others', valid: true, headers: (ctx) => [cookieHeader(sessionCookie(first(ctx).name, first(ctx).token, ctx.nowMs + 3_600_000), true)] },
  { name: 'cookie-same-origin', valid: true, headers: (ctx, host) => [cookieHeader(sessionCookie(first(ctx).name, first(ctx).token, ctx.nowMs + 3_600_000)), ['origin', `http://${host}`]] },
  // Valid, but from a foreign page: refused with 403, which is right.
  { name: 'cookie-cross-origin', valid: true, headers: (ctx) => [cookieHeader(sessionCookie(first(ctx).name, first(ctx).token, ctx.nowMs + 3_600_000)), ['origin', 'https://evil.example']] },
  { name: 'none', valid: false, headers: () => [] },
  { name: 'bearer-wrong', valid: false, headers: () => [['authorization', `Bearer ${randomBytes(12).toString('hex')}`]] },
  { name: 'bearer-prefix', valid: false, headers: (ctx) => [['authorization', `Bearer ${first(ctx).token.slice(0, -1)}`]] },
  { name: 'bearer-suffix', valid: false, headers: (ctx) => [['authorization', `Bearer ${first(ctx).token}0`]] },
  { name: 'bearer-empty', valid: false, headers: () => [['authorization', 'Bearer']] },
  { name: 'bearer-two-words', valid: false, headers: (ctx) => [['authorization', `Bearer ${first(ctx).token} ${first(ctx).token}`]] },
  { name: 'token-without-scheme', valid: false, headers: (ctx) => [['authorization', first(ctx).token]] },
  { name: 'basic', valid: false, headers: (ctx) => [['authorization', `Basic ${Buffer.from(`${first(ctx).name}:${first(ctx).token}`).toString('base64')}`]] },
  { name: 'cookie-garbage', valid: false, headers: (ctx) => [['cookie', `${cookieName}=${percentEncode(String(ctx.seq % 2 ? '\u0000\ud800x' : 'a.b.c.d'))}`]] },
  { name: 'cookie-bad-escape', valid: false, headers: () => [['cookie', `${cookieName}=%E0%A4%A`]] },
  { name: 'cookie-forged', valid: false, headers: (ctx) => [cookieHeader(`${first(ctx).name}.${ctx.nowMs + 3_600_000}.${randomBytes(32).toString('base64url')}`)] },
  { name: 'cookie-expired', valid: false, headers: (ctx) => [cookieHeader(sessionCookie(first(ctx).name, first(ctx).token, ctx.nowMs - 1000))] },
  { name: 'cookie-unknown-actor', valid: false, headers: (ctx) => [cookieHeader(sessionCookie('mallory', first(ctx).token, ctx.nowMs + 3_600_000))] },
  { name: 'cookie-other-actors-mac', valid: false, headers: (ctx) => [cookieHeader(sessionCookie(second(ctx).name === first(ctx).name ? 'x' : second(ctx).name, first(ctx).token, ctx.nowMs + 3_600_000))] },
  { name: 'cookie-huge-expiry', valid: false, headers: (ctx) => [cookieHeader(`${first(ctx).name}.1e400.${randomBytes(32).toString('base64url')}`)] },
  { name: 'query-token-wrong', valid: false, headers: () => [], queryToken: () => 'wrong-token-0123456789' },
  // The right token, but in the query of a route that only reads the header.
  { name: 'query-token-elsewhere', valid: false, headers: () => [], queryToken: (ctx) => first(ctx).token },
];

/** Percent-encodes the UTF-8 bytes (a lone surrogate becomes U+FFFD), where encodeURIComponent would throw. */
function percentEncode(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

const queryOf = (pairs: [string, string][]) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&')}`);

// --- routes ------------------------------------------------------------------

const limit = fc.oneof(fc.integer({ min: 1, max: 500 }).map(String), fc.constantFrom('1', '500', '050'));
const cursor = fc.oneof(fc.integer({ min: 1, max: 100 }).map(String), unreachableId);
const badPage = fc.constantFrom<[string, string]>(['limit', '0'], ['limit', '501'], ['limit', 'abc'], ['limit', '-1'], ['cursor', '0'], ['cursor', 'x'], ['cursor', '-5'], ['unknown', '1'], ['limit', 'NaN']);
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });
const pairs = (record: Record<string, fc.Arbitrary<string | undefined>>): fc.Arbitrary<[string, string][]> =>
  fc.record(Object.fromEntries(Object.entries(record).map(([k, arb]) => [k, opt(arb as fc.Arbitrary<string>)]))).map((values) =>
    Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
const someText = fc.oneof(fuzzText.filter((t) => t.length > 0), fc.constantFrom('conversation.suspend', 'alice', 'conversation:1'));
const junkBody: fc.Arbitrary<JsonNode | undefined> = fc.oneof(fc.constant(undefined), fc.constant(obj({})), anyValue, deepNode);

const routes: readonly RouteShape[] = [
  {
    method: 'GET',
    path: '/admin/conversations',
    query: pairs({
      platform: fc.constantFrom('slack', 'discord', 'telegram'),
      status: fc.constantFrom('active', 'suspended'),
      busy: fc.constantFrom('true', 'false'),
      busyMode: fc.constantFrom('interrupt', 'queue', 'collect', 'steer'),
      updatedSince: fc.constantFrom('2024-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '2024-01-01T00:00:00+14:00'),
      limit,
      cursor,
    }),
    badQuery: fc.oneof(
      badPage.map((p) => [p]),
      fc.constantFrom<[string, string][]>([['platform', 'irc']], [['status', 'dead']], [['busy', 'maybe']], [['busyMode', 'x']], [['updatedSince', 'yesterday']], [['updatedSince', '2024-13-45T99:99:99Z']]),
    ),
  },
  { method: 'GET', path: '/admin/conversations/{id}' },
  { method: 'GET', path: '/admin/conversations/{id}/approvals' },
  {
    method: 'GET',
    path: '/admin/conversations/{id}/transcript',
    query: pairs({
      session: readableId,
      order: fc.constantFrom('asc', 'desc'),
      cursor: fc.oneof(fc.constantFrom('1:1', '0:0', '99999999999999999999:1', '1:99999999999999999999', '9007199254740993:9007199254740993'), fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => `${a}:${b}`)),
      limit,
    }),
    badQuery: fc.constantFrom<[string, string][]>([['order', 'up']], [['cursor', 'abc']], [['cursor', '1:2:3']], [['cursor', '-1:1']], [['session', '0']], [['limit', '0']], [['extra', 'x']]),
  },
  {
    method: 'POST',
    path: '/admin/conversations/{id}/suspend',
    mutating: true,
    body: fc.oneof(fc.constant(undefined), fc.constant(obj({})), fuzzText.filter((t) => t.length >= 1 && t.length <= 200).map((reason) => obj({ reason: str(reason) }))),
    badBody: fc.constantFrom(obj({ reason: str('') }), obj({ reason: raw('5') }), obj({ reason: str('x'.repeat(201)) }), obj({ extra: raw('1') }), raw('[]'), raw('"reason"'), obj({ reason: raw('null') })),
  },
  { method: 'POST', path: '/admin/conversations/{id}/resume', mutating: true, body: junkBody },
  { method: 'POST', path: '/admin/conversations/{id}/reset', mutating: true, body: junkBody },
  { method: 'POST', path: '/admin/conversations/{id}/compact', mutating: true, body: junkBody },
  { method: 'POST', path: '/admin/conversations/{id}/interrupt', mutating: true, body: junkBody },
  {
    method: 'PUT',
    path: '/admin/conversations/{id}/busy-mode',
    mutating: true,
    body: fc.constantFrom('interrupt', 'queue', 'collect', 'steer', null).map((mode) => obj({ mode: mode === null ? raw('null') : str(mode) })),
    badBody: fc.constantFrom(obj({}), obj({ mode: str('bogus') }), obj({ mode: raw('1') }), obj({ mode: str('queue'), extra: raw('1') }), raw('null'), obj({ mode: str('QUEUE') })),
  },
  {
    method: 'PUT',
    path: '/admin/conversations/{id}/runtime',
    mutating: true,
    body: fc
      .tuple(fc.constantFrom('openai', 'codex', null, undefined), fc.constantFrom('read-only', 'workspace-write', 'full-access', 'full-access-unattended', null, undefined))
      .filter(([runtime, profile]) => runtime !== undefined || profile !== undefined)
      .map(([runtime, profile]) =>
        obj({
          ...(runtime === undefined ? {} : { runtime: runtime === null ? raw('null') : str(runtime) }),
          ...(profile === undefined ? {} : { permissionProfile: profile === null ? raw('null') : str(profile) }),
        }),
      ),
    badBody: fc.constantFrom(obj({}), obj({ runtime: str('claude') }), obj({ permissionProfile: str('root') }), obj({ runtime: raw('1') }), obj({ runtime: str('codex'), extra: raw('1') }), raw('null'), obj({ runtime: str('CODEX') })),
  },
  {
    method: 'DELETE',
    path: '/admin/conversations/{id}',
    mutating: true,
    query: fuzzText.filter((t) => t.length > 0).map((confirm) => [['confirm', confirm]]),
    badQuery: fc.constantFrom<[string, string][]>([], [['confirm', '']], [['confirm', 'x'], ['extra', 'y']]),
  },
  {
    method: 'GET',
    path: '/admin/turns',
    query: pairs({ status: fc.constantFrom('queued', 'running', 'completed', 'interrupted', 'failed', 'cancelled'), conversation: readableId, limit, cursor }),
    badQuery: fc.oneof(badPage.map((p) => [p]), fc.constantFrom<[string, string][]>([['status', 'done']], [['conversation', '0']], [['conversation', 'x']])),
  },
  { method: 'GET', path: '/admin/queue' },
  {
    method: 'GET',
    path: '/admin/queue/{id}/failed',
    stringParam: true,
    query: pairs({ offset: fc.oneof(fc.nat().map(String), bigNumberText.filter((t) => /^\d+$/.test(t))), limit }),
    badQuery: fc.constantFrom<[string, string][]>([['offset', '-1']], [['limit', '0']], [['offset', 'x']], [['extra', '1']]),
  },
  // Only ever a job id no job has (fuzz-<tag>-<seq>, after fuzzed text): a real failed job is never retried.
  { method: 'POST', path: '/admin/queue/{id}/jobs/{job}/retry', mutating: true, stringParam: true, body: junkBody },
  {
    method: 'GET',
    path: '/admin/outbox',
    query: pairs({ status: fc.constantFrom('undelivered', 'pending', 'failed'), conversation: readableId, limit, cursor }),
    badQuery: fc.oneof(badPage.map((p) => [p]), fc.constantFrom<[string, string][]>([['status', 'sent']], [['conversation', '-1']])),
  },
  { method: 'POST', path: '/admin/outbox/{id}/retry', mutating: true, body: junkBody },
  { method: 'GET', path: '/admin/restarts' },
  {
    method: 'GET',
    path: '/admin/audit',
    query: pairs({ actor: someText, action: someText, target: someText, limit, cursor }),
    badQuery: fc.oneof(badPage.map((p) => [p]), fc.constantFrom<[string, string][]>([['actor', '']], [['action', '']], [['target', '']])),
  },
  { method: 'GET', path: '/admin/pairings' },
  // A code from fuzzed text (never one a user was given, in practice) and a platform that is never a real one: nothing paired or revoked.
  { method: 'POST', path: '/admin/pairings/{id}/approve', mutating: true, stringParam: true, body: junkBody },
  { method: 'POST', path: '/admin/pairings/{id}/deny', mutating: true, stringParam: true, body: junkBody },
  { method: 'GET', path: '/admin/paired-users' },
  { method: 'DELETE', path: '/admin/paired-users/{id}/{job}', mutating: true, stringParam: true },
  ...scheduleRoutes,
  { method: 'GET', path: '/admin/whoami' },
  { method: 'POST', path: '/admin/session', body: junkBody },
  { method: 'DELETE', path: '/admin/session' },
  { method: 'GET', path: '/admin/openapi.json' },
];

/** Routes only sent without credentials: bull-board can change the queues, and the events stream is a WebSocket. */
const unauthenticatedOnly: readonly RouteShape[] = [
  { method: 'GET', path: '/admin/queues' },
  { method: 'GET', path: '/admin/queues/api/queues' },
  { method: 'PUT', path: '/admin/queues/api/queues/pause' },
  { method: 'DELETE', path: '/admin/queues/api/queues/{id}/clean/failed', stringParam: true },
  { method: 'GET', path: '/admin/events' },
  { method: 'GET', path: '/admin/docs/' },
];

/** Paths that look like admin routes to a person but not to the router, or are spelled to slip past a prefix check. */
const pathTricks = fc.constantFrom(
  '/admin//conversations',
  '/admin/./conversations',
  '/admin/conversations/',
  '/admin/%63onversations',
  '/admin/conversations/..%2fwhoami',
  '/admin/conversations/1/../../whoami',
  '/ADMIN/conversations',
  '/admin;/conversations',
  '/admin/conversations%00',
  '/admin/conversations?x=%E0%A4%A',
  '/admin/whoami#x',
  '/admin/whoami/..',
  '/admin/nope',
);

// --- cases -------------------------------------------------------------------

type Plan =
  | { p: 'unauthenticated'; route: RouteShape; id: string; credential: AdminCredential; trick: string | undefined; body: JsonNode | undefined; query: [string, string][] }
  | { p: 'authentic'; route: RouteShape; id: string; credential: AdminCredential; body: JsonNode | undefined; query: [string, string][] }
  | { p: 'invalid'; route: RouteShape; id: string; credential: AdminCredential; what: InvalidWhat };

type InvalidWhat =
  | { w: 'id'; id: string }
  | { w: 'query'; query: [string, string][] }
  | { w: 'body'; body: JsonNode }
  | { w: 'not-json'; text: string }
  | { w: 'truncated'; fraction: number }
  | { w: 'content-type'; contentType: string }
  | { w: 'huge'; overBy: number }
  | { w: 'unknown-route'; path: string }
  | { w: 'wrong-method'; method: string };

const validCredential = fc.constantFrom(...adminCredentials.filter((c) => c.valid));
const invalidCredential = fc.constantFrom(...adminCredentials.filter((c) => !c.valid));

function routeValues(route: RouteShape) {
  const id = route.stringParam ? fc.oneof(fc.constantFrom('turns', 'nope'), fuzzText.filter((t) => t.length > 0 && t.length < 150)) : route.mutating ? unreachableId : readableId;
  return fc.record({ id, query: route.query ?? fc.constant<[string, string][]>([]), body: route.body ?? fc.constant(undefined) });
}

const unauthenticatedPlan: fc.Arbitrary<Plan> = fc
  .record({ route: fc.constantFrom(...routes, ...unauthenticatedOnly), credential: invalidCredential, trick: fc.oneof({ weight: 7, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: pathTricks }) })
  .chain(({ route, credential, trick }) => routeValues(route).map((values) => ({ p: 'unauthenticated' as const, route, credential, trick, ...values })));

const authenticPlan: fc.Arbitrary<Plan> = fc
  .record({ route: fc.constantFrom(...routes), credential: validCredential })
  .chain(({ route, credential }) => routeValues(route).map((values) => ({ p: 'authentic' as const, route, credential, ...values })));

const invalidPlan: fc.Arbitrary<Plan> = fc.record({ route: fc.constantFrom(...routes), credential: validCredential }).chain(({ route, credential }) => {
  const withBody = route.method === 'POST' || route.method === 'PUT';
  const options: fc.Arbitrary<InvalidWhat>[] = [
    fc.constantFrom<InvalidWhat>({ w: 'unknown-route', path: '/admin/nope' }, { w: 'unknown-route', path: '/admin/conversations/1/explode' }, { w: 'unknown-route', path: '/admin/queue/turns/jobs' }),
    fc.constantFrom('PATCH', 'OPTIONS').map((method): InvalidWhat => ({ w: 'wrong-method', method })),
  ];
  if (route.path.includes('{id}') && !route.stringParam) options.push(refusedId.map((id): InvalidWhat => ({ w: 'id', id })));
  if (route.badQuery) options.push(route.badQuery.map((query): InvalidWhat => ({ w: 'query', query })));
  if (route.badBody) options.push(route.badBody.map((body): InvalidWhat => ({ w: 'body', body })));
  if (withBody) {
    options.push(
      notAnObjectBody.filter((t) => t.trim() !== '' && !isJson(t.replace(/^\ufeff/, ''))).map((text): InvalidWhat => ({ w: 'not-json', text })),
      fc.double({ min: 0.05, max: 0.95, noNaN: true }).map((fraction): InvalidWhat => ({ w: 'truncated', fraction })),
      fc.constantFrom('text/html', 'application/octet-stream', 'multipart/form-data; boundary=fuzz', 'application/x-www-form-urlencoded', 'image/png').map((contentType): InvalidWhat => ({ w: 'content-type', contentType })),
      fc.integer({ min: 1, max: 256 * 1024 }).map((overBy): InvalidWhat => ({ w: 'huge', overBy })),
    );
  }
  return fc.record({ what: fc.oneof(...options), values: routeValues(route) }).map(({ what, values }) => ({ p: 'invalid' as const, route, credential, id: values.id, what }));
});

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const jobText = ['', '\u0000', '\ud800', 'é/', '%', ' ', '\u202e', '😀'];

function fillPath(route: RouteShape, id: string, ctx: CaseContext): string {
  return route.path.replace('{id}', percentEncode(id)).replace('{job}', percentEncode(`${jobText[ctx.seq % jobText.length] ?? ''}fuzz-${ctx.tag}-${ctx.seq}`));
}

/** A body the route would accept, to truncate, mislabel or pad. */
function baseBodyOf(path: string): JsonNode {
  if (path === '/admin/schedules') return scheduleBaseBody;
  if (path.endsWith('busy-mode')) return obj({ mode: str('queue') });
  if (path.endsWith('runtime')) return obj({ runtime: str('codex') });
  return obj({ reason: str('fuzz') });
}

function buildPlan(plan: Plan, ctx: CaseContext): BuiltRequest {
  const host = new URL(ctx.target.baseUrl).host;
  const headers: [string, string][] = plan.credential.headers(ctx, host);
  const query: [string, string][] = plan.p === 'invalid' ? (plan.what.w === 'query' ? plan.what.query : []) : plan.query;
  const token = plan.credential.queryToken?.(ctx);
  if (token !== undefined) query.push(['token', token]);
  let method: string = plan.route.method;
  let path = `${fillPath(plan.route, plan.p === 'invalid' && plan.what.w === 'id' ? plan.what.id : plan.id, ctx)}${queryOf(query)}`;
  let body: Buffer | undefined;
  let contentType: string | undefined = 'application/json';
  if (plan.p === 'unauthenticated' && plan.trick !== undefined) path = plan.trick;
  if (plan.p !== 'invalid') {
    if (plan.body !== undefined && plan.route.method !== 'GET') body = Buffer.from(renderJson(plan.body));
  } else {
    const what = plan.what;
    const base = () => Buffer.from(renderJson(baseBodyOf(plan.route.path)));
    switch (what.w) {
      case 'body':
        body = Buffer.from(renderJson(what.body));
        break;
      case 'not-json':
        body = Buffer.from(what.text);
        break;
      case 'truncated': {
        const full = base();
        body = full.subarray(0, Math.max(1, Math.floor(full.length * what.fraction)));
        break;
      }
      case 'content-type':
        body = base();
        contentType = what.contentType;
        break;
      case 'huge':
        body = Buffer.concat([base(), Buffer.alloc((ctx.target.bodyLimitBytes ?? 1024 * 1024) + what.overBy, 0x20)]);
        break;
      case 'unknown-route':
        path = what.path;
        break;
      case 'wrong-method':
        method = what.method;
        break;
      default:
        break;
    }
  }
  if (body !== undefined && contentType) headers.push(['content-type', contentType]);
  return { method, path, headers, ...(body !== undefined ? { body } : {}), transport: 'http', ...(plan.credential.valid ? {} : { guessing: true }) };
}

function planKinds(plan: Plan): string[] {
  const kinds = [`route:${plan.route.method} ${plan.route.path}`, `auth:${plan.credential.name}`];
  if (plan.p === 'unauthenticated') kinds.push('bad-auth', ...(plan.trick !== undefined ? ['path-trick'] : []));
  if (plan.p === 'invalid') kinds.push(`invalid:${plan.what.w}`);
  if (plan.p === 'authentic' && /\d{16,}/.test(plan.id)) kinds.push('bigint');
  return kinds;
}

/** Admin requests: a third without valid credentials, a third authenticated but refused by the schema, a third authentic. */
export const adminCases: fc.Arbitrary<FuzzCase> = fc.oneof(unauthenticatedPlan, invalidPlan, authenticPlan).map((plan): FuzzCase => {
  const cls: FuzzClass = plan.p;
  return { route: 'admin', cls, kinds: planKinds(plan), build: (ctx) => buildPlan(plan, ctx) };
});
