import fc from 'fast-check';
import { readableId, type RouteShape } from './admin-route-shape.ts';
import { fuzzText, obj, raw, str, type JsonNode } from './json-text.ts';

/**
 * The schedule routes of the admin API (issue 34; docs/admin.md,
 * "Schedules"), as admin-cases.ts sends them. Creating is aimed only at
 * conversations past 2^40, and cancelling only at such schedule ids, so a
 * run against a gateway that serves real conversations schedules and cancels
 * nothing: a body good enough to reach the action gets 404, a bad time, cron
 * or time zone 400 SCHEDULE_INVALID (audited: the authentic phase), a shape
 * the schema refuses 400 INVALID_REQUEST (never a row: the invalid phase).
 */

/** A conversation id no conversation has, mostly as a JSON integer the schema takes; a few past 2^53 or written oddly. */
const farConversationId: fc.Arbitrary<JsonNode> = fc.oneof(
  { weight: 6, arbitrary: fc.bigInt({ min: 2n ** 40n, max: 2n ** 53n - 1n }).map((n) => raw(String(n))) },
  { weight: 1, arbitrary: fc.bigInt({ min: 2n ** 40n, max: 2n ** 50n }).map((n) => raw(`${n}.0`)) },
  { weight: 1, arbitrary: fc.constantFrom('9007199254740993', '18446744073709551616', '1e400', '1e15').map(raw) },
);

/** Times in every shape `at` may be given: good ones, past and far ones, impossible dates, no offset, odd offsets, not times at all. */
const atText: fc.Arbitrary<string> = fc.oneof(
  fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(
    '2027-02-30T09:00:00Z', '2026-12-01T24:00:00Z', '2026-12-01T09:00:00+14:00', '2026-12-01T09:00:00-12:00', '2026-12-01T09:00:00+99:99',
    '2026-12-01T09:00:00', '2026-12-01', '2026-12-01T09:00:00.9999Z', '+275760-09-13T00:00:00Z', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z',
    'tomorrow', 'now', '', '1767225600000', 'NaN', '2026-12-01T09:00:00Z ', '２０２６-12-01T09:00:00Z',
  ),
  fuzzText.filter((t) => t.length <= 64),
);

const cronField = fc.constantFrom('*', '0', '59', '60', '-1', '*/5', '*/0', '*/1000000000000', '1-5', '5-1', '1-1000000', '1,2,3', 'L', '7L', '1#5', 'SUN#6', '?', 'H', 'JAN', 'MON-FRI', '31', '2');

/** Cron expressions: ordinary, too frequent, never firing, with six fields or macros, assembled field by field, or any text. */
const cronText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('0 9 * * *', '0 9 * * 1-5', '*/5 * * * *', '* * * * *', '* * * * * *', '0 0 1 1 * 2099', '@daily', '0 0 31 2 *', '0 0 29 2 1', '59 23 31 12 *', '', ' ', '0  9 *  * *'),
  fc.array(cronField, { minLength: 4, maxLength: 6 }).map((fields) => fields.join(' ')),
  fuzzText.filter((t) => t.length <= 200),
);

const timeZoneText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('UTC', 'utc', 'Europe/Paris', 'America/New_York', 'Pacific/Kiritimati', 'Asia/Kathmandu', 'EST5EDT', 'Etc/GMT+14', 'Mars/Olympus_Mons', '+05:00', 'UTC+1', 'Factory', '', 'Z'.repeat(64)),
  fuzzText.filter((t) => t.length <= 64),
);

const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });

/** Bodies the schema takes (or, for an id past its bound, refuses as the client's mistake): they reach the action and are refused there. */
const scheduleBody: fc.Arbitrary<JsonNode | undefined> = fc
  .record({ conversationId: farConversationId, prompt: fc.oneof(fuzzText, fc.constantFrom('Remind me to stretch', '', '   ')), at: opt(atText), cron: opt(cronText), timeZone: opt(timeZoneText) })
  .map(({ conversationId, prompt, at, cron, timeZone }) =>
    obj({ conversationId, prompt: str(prompt), at: at === undefined ? undefined : str(at), cron: cron === undefined ? undefined : str(cron), timeZone: timeZone === undefined ? undefined : str(timeZone) }),
  );

const base = { conversationId: raw('1099511627776'), prompt: str('fuzz'), cron: str('0 9 * * *') };

/** A body the route would accept but for its conversation: what admin-cases.ts truncates, mislabels or pads. */
export const scheduleBaseBody: JsonNode = obj(base);

/** Shapes the schema refuses before any action: nothing audited, nothing stored. */
const badScheduleBody: fc.Arbitrary<JsonNode> = fc.constantFrom(
  obj({}),
  obj({ ...base, prompt: undefined }),
  obj({ ...base, conversationId: undefined }),
  obj({ ...base, conversationId: str('1099511627776') }),
  obj({ ...base, conversationId: raw('0') }),
  obj({ ...base, conversationId: raw('-1') }),
  obj({ ...base, conversationId: raw('1099511627776.5') }),
  obj({ ...base, prompt: raw('42') }),
  obj({ ...base, prompt: raw('null') }),
  obj({ ...base, at: raw('1767225600000') }),
  obj({ ...base, cron: raw('["0 9 * * *"]') }),
  obj({ ...base, cron: str('0 '.repeat(101)) }),
  obj({ ...base, at: str(`2026-12-01T09:00:00Z${' '.repeat(60)}`) }),
  obj({ ...base, timeZone: str('Europe/'.repeat(10)) }),
  obj({ ...base, timeZone: raw('false') }),
  obj({ ...base, every: str('day') }),
  raw('[]'),
  raw('null'),
  raw('"0 9 * * *"'),
);

export const scheduleRoutes: readonly RouteShape[] = [
  {
    method: 'GET',
    path: '/admin/schedules',
    query: fc
      .record({ conversationId: opt(readableId), limit: opt(fc.oneof(fc.integer({ min: 1, max: 500 }).map(String), fc.constantFrom('1', '500'))) })
      .map((q) => Object.entries(q).filter((entry): entry is [string, string] => entry[1] !== undefined)),
    badQuery: fc.constantFrom<[string, string][]>([['conversationId', '0']], [['conversationId', 'x']], [['conversationId', '-3']], [['limit', '0']], [['limit', '501']], [['status', 'active']], [['conversation', '1']]),
  },
  { method: 'POST', path: '/admin/schedules', mutating: true, body: scheduleBody, badBody: badScheduleBody },
  { method: 'DELETE', path: '/admin/schedules/{id}', mutating: true },
];

