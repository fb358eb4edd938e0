import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import type { CaseContext, FuzzCase } from './fuzz-types.ts';
import { arr, fuzzText, num, obj, raw, str, type JsonNode } from './json-text.ts';
import { webhookCases, type AuthVariant } from './webhook-cases.ts';

type Variant = {
  shape: 'guild-command' | 'dm-command' | 'subcommands' | 'ping' | 'component' | 'autocomplete' | 'modal' | 'unknown-type';
  name: string;
  text: string;
};

/** Ed25519 over `timestamp + body` with the application's private key, as Discord signs (PLATFORMS.md §2.3). */
export function createDiscordSigner(privateKey: KeyObject): (timestamp: string, body: Buffer) => string {
  return (timestamp, body) => sign(null, Buffer.concat([Buffer.from(timestamp, 'utf8'), body]), privateKey).toString('hex');
}

// A key the gateway does not know: a well-formed signature that must still fail.
const strangerSigner = createDiscordSigner(generateKeyPairSync('ed25519').privateKey);

const signer = (ctx: CaseContext) => ctx.target.discord?.sign ?? strangerSigner;
const seconds = (ctx: CaseContext, offset = 0) => String(Math.floor(ctx.nowMs / 1000) + offset);
const headersFor = (signature: string, timestamp: string) => ({ 'x-signature-ed25519': signature, 'x-signature-timestamp': timestamp });

/** Discord's interaction signature: right (also in capitals), right but stale, and wrong in every way. */
export const discordAuth: readonly AuthVariant[] = [
  { name: 'valid', valid: true, weight: 4, headers: (b, ctx) => headersFor(signer(ctx)(seconds(ctx), b), seconds(ctx)) },
  { name: 'valid-upper-hex', valid: true, headers: (b, ctx) => headersFor(signer(ctx)(seconds(ctx), b).toUpperCase(), seconds(ctx)) },
  // Rightly signed, but an hour old, ahead, or with a timestamp that is not a time: outside the freshness
  // window (issue 17 defect 9, packages/platforms/src/signature-window.ts), so a replay and refused.
  { name: 'stale', valid: false, headers: (b, ctx) => headersFor(signer(ctx)(seconds(ctx, -3600), b), seconds(ctx, -3600)) },
  { name: 'future', valid: false, headers: (b, ctx) => headersFor(signer(ctx)(seconds(ctx, 3600), b), seconds(ctx, 3600)) },
  { name: 'odd-timestamp', valid: false, headers: (b, ctx) => headersFor(signer(ctx)('not-a-time', b), 'not-a-time') },
  { name: 'none', valid: false, headers: () => ({}) },
  { name: 'signature-only', valid: false, headers: (b, ctx) => ({ 'x-signature-ed25519': signer(ctx)(seconds(ctx), b) }) },
  { name: 'timestamp-only', valid: false, headers: (_b, ctx) => ({ 'x-signature-timestamp': seconds(ctx) }) },
  { name: 'random', valid: false, headers: (_b, ctx) => headersFor(randomBytes(64).toString('hex'), seconds(ctx)) },
  { name: 'wrong-key', valid: false, headers: (b, ctx) => headersFor(strangerSigner(seconds(ctx), b), seconds(ctx)) },
  { name: 'tampered', valid: false, headers: (b, ctx) => headersFor(signer(ctx)(seconds(ctx), Buffer.concat([b, Buffer.from(' ')])), seconds(ctx)) },
  { name: 'other-timestamp', valid: false, headers: (b, ctx) => headersFor(signer(ctx)(seconds(ctx), b), seconds(ctx, 1)) },
  { name: 'short', valid: false, headers: (b, ctx) => headersFor(signer(ctx)(seconds(ctx), b).slice(0, 127), seconds(ctx)) },
  { name: 'not-hex', valid: false, headers: (b, ctx) => headersFor(`${signer(ctx)(seconds(ctx), b).slice(0, 127)}g`, seconds(ctx)) },
  { name: 'empty', valid: false, headers: () => headersFor('', '') },
];

const variant: fc.Arbitrary<Variant> = fc.record({
  shape: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('guild-command' as const, 'dm-command' as const, 'subcommands' as const) },
    { weight: 2, arbitrary: fc.constantFrom('ping' as const, 'component' as const, 'autocomplete' as const, 'modal' as const, 'unknown-type' as const) },
  ),
  name: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('ask', 'help', 'new', 'stop', 'status', 'compact', 'busy', 'reset') }, { weight: 1, arbitrary: fuzzText }),
  text: fuzzText,
});

const typeOf: Record<Variant['shape'], number> = { 'guild-command': 2, 'dm-command': 2, subcommands: 2, ping: 1, component: 3, autocomplete: 4, modal: 5, 'unknown-type': 99 };

function tree(v: Variant, ctx: CaseContext): JsonNode {
  // Snowflakes unique to the case: the interaction id is the event id, and a repeat would be a duplicate, not a new row.
  const snowflake = (prefix: number) => `${prefix}${ctx.tag.padStart(6, '0')}${String(ctx.seq).padStart(8, '0')}`;
  const user = obj({ id: str(snowflake(41)), username: str(`fuzz${ctx.seq}`), global_name: str(v.text.slice(0, 32)) });
  const inGuild = v.shape !== 'dm-command';
  const options =
    v.shape === 'subcommands'
      ? arr(obj({ name: str('group'), type: num(2), options: arr(obj({ name: str('sub'), type: num(1), options: arr(obj({ name: str('text'), type: num(3), value: str(v.text) })) })) }))
      : arr(obj({ name: str('text'), type: num(3), value: str(v.text) }), obj({ name: str('count'), type: num(4), value: raw('3') }));
  return obj({
    id: str(snowflake(15)),
    application_id: str(ctx.target.discord?.applicationId ?? '1'),
    type: num(typeOf[v.shape]),
    token: str(`fuzz-token-${ctx.tag}-${ctx.seq}`),
    version: num(1),
    channel_id: str(snowflake(16)),
    channel: obj({ id: str(snowflake(16)), type: num(inGuild ? 0 : 1) }),
    guild_id: inGuild ? str(snowflake(17)) : undefined,
    member: inGuild ? obj({ user, roles: arr(str(snowflake(18))), permissions: str('0') }) : undefined,
    user: inGuild ? undefined : user,
    locale: str('en-US'),
    data: v.shape === 'ping' ? undefined : v.shape === 'component' ? componentData(v, ctx.seq) : obj({ id: str(snowflake(19)), name: str(v.name), type: num(1), options }),
  });
}

/**
 * A button press (issue 30): most carry a well-formed approval payload, `apv:<token>:<a|s|d>`, with a token no
 * question has, so the press reaches the decision and is refused there; the rest a fuzzed custom_id.
 */
function componentData(v: Variant, seq: number): JsonNode {
  const token = `fz${seq.toString(36)}${[...v.text].filter((c) => /[A-Za-z0-9_-]/.test(c)).join('')}`.padEnd(8, 'x').slice(0, 48);
  const customId = seq % 4 === 3 ? v.text : `apv:${token}:${'asd'[seq % 3] as string}`;
  return obj({ custom_id: str(customId), component_type: num(2) });
}

const notASnowflake = fc.constantFrom(raw('1500000000000000001'), raw('9007199254740993'), str(''), str('abc'), str('1'.repeat(21)), raw('null'), str('12 34'), str('１２３'));

/** `POST /webhooks/discord/interactions`: interactions signed with the application's key, and not. */
export const discordCases: fc.Arbitrary<FuzzCase> = webhookCases<Variant>({
  route: 'discord',
  path: '/webhooks/discord/interactions',
  variant,
  tree,
  // Not `id`: a value set here could repeat across cases, and a repeated interaction id is
  // deferred like a new one but stores nothing, which would make the row count ambiguous.
  mutablePaths: [
    ['application_id'],
    ['type'],
    ['token'],
    ['version'],
    ['channel_id'],
    ['channel'],
    ['guild_id'],
    ['member'],
    ['member', 'roles'],
    ['member', 'user'],
    ['member', 'user', 'id'],
    ['user'],
    ['data'],
    ['data', 'name'],
    ['data', 'options'],
    ['data', 'resolved'],
    ['locale'],
  ],
  requiredPaths: [
    { path: ['id'], wrong: notASnowflake },
    { path: ['application_id'], wrong: notASnowflake },
    { path: ['type'], wrong: fc.constantFrom(str('2'), raw('2.5'), raw('null'), raw('[]'), raw('1e400')) },
    { path: ['token'], wrong: fc.constantFrom(str(''), raw('1'), raw('null'), raw('{}')) },
  ],
  textPath: ['data', 'name'],
  auth: discordAuth,
  // text/plain: Fastify's own text parser hands the route the same string, so it is verified and taken like JSON.
  oddContentTypes: ['application/json; charset=utf-8', 'Application/JSON', 'text/plain', null, 'application/json; charset=utf-16le', 'application/jsonx'],
  refusedContentTypes: ['text/html', 'application/octet-stream', 'multipart/form-data; boundary=fuzz', 'image/png', 'application/x-www-form-urlencoded'],
});
