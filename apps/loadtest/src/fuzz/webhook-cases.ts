import fc from 'fast-check';
import type { BuiltRequest, CaseContext, FuzzCase, FuzzClass } from './fuzz-types.ts';
import { anyValue, applyMutations, deepNode, fuzzText, notAnObjectBody, renderJson, str, trickyKey, type JsonNode, type JsonPath, type Mutation } from './json-text.ts';

/** How a request proves where it comes from; `valid` says whether the gateway must take it as authentic. */
export interface AuthVariant {
  name: string;
  valid: boolean;
  /** How often it is picked among the variants of its validity (default 1). */
  weight?: number;
  /** Needs header bytes only a raw socket sends (duplicate headers, NUL, 8-bit). */
  raw?: boolean;
  /** The auth headers for these exact body bytes, at send time. */
  headers(body: Buffer, ctx: CaseContext): Record<string, string> | [string, string][];
}

export interface WebhookSpec<V> {
  route: 'slack' | 'telegram' | 'discord';
  path: string;
  /** The shapes of a valid body (a DM, a group message, a ping, ...), with their fuzzed field values. */
  variant: fc.Arbitrary<V>;
  /** The valid body for this case; ids are derived from ctx.seq and ctx.tag, so each case is a new event. */
  tree(variant: V, ctx: CaseContext): JsonNode;
  /** Paths whose value any mutation may replace or duplicate: the body may stay valid or not, the gateway decides. */
  mutablePaths: readonly JsonPath[];
  /** Paths the parser certainly needs: removed, or given one of `wrong`, the body is refused (400) and nothing stored. */
  requiredPaths: readonly { path: JsonPath; wrong: fc.Arbitrary<JsonNode> }[];
  /** Where the message text sits, for invalid UTF-8 and large-but-allowed bodies. */
  textPath: JsonPath;
  auth: readonly AuthVariant[];
  /** Content types the route takes the body in; an odd one (charset, case) is sent as authentic, the gateway decides. */
  oddContentTypes: readonly (string | null)[];
  /** Content types no parser of the route takes: 415 (or 400), nothing stored. */
  refusedContentTypes: readonly string[];
}

/**
 * What is done to the body. Authentic plans keep it parseable (the gateway
 * decides what it makes of the values); invalid plans certainly break it.
 */
type BodyPlan =
  | { p: 'mutated'; mutations: Mutation[]; kinds: string[] }
  | { p: 'invalid-utf8'; bytes: number[] }
  | { p: 'large'; fraction: number; unit: string }
  | { p: 'required'; index: number; drop: boolean; value: JsonNode; viaDuplicate: boolean }
  | { p: 'truncated'; fraction: number }
  | { p: 'not-object'; text: string }
  | { p: 'unescaped-control'; char: string }
  | { p: 'huge'; overBy: number; filler: 'space' | 'string' | 'nested' }
  | { p: 'wrong-method'; method: string }
  | { p: 'refused-content-type'; contentType: string };

const invalidUtf8 = [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80], [0x80, 0x80, 0x80], [0xfe, 0xff, 0x00]] as const;
const marker = '\u0001@@fuzz-bytes@@\u0001';

function mutations(spec: WebhookSpec<unknown>): fc.Arbitrary<{ mutations: Mutation[]; kinds: string[] }> {
  const path = fc.constantFrom(...spec.mutablePaths);
  const one: fc.Arbitrary<{ m: Mutation; kind: string }> = fc.oneof(
    { weight: 4, arbitrary: fc.record({ path, value: anyValue }).map(({ path, value }) => ({ m: { op: 'set' as const, path, value }, kind: kindOf(value) })) },
    { weight: 3, arbitrary: fc.record({ path: fc.constant(spec.textPath), value: fuzzText }).map(({ path, value }) => ({ m: { op: 'set' as const, path, value: str(value) }, kind: 'unicode' })) },
    {
      weight: 2,
      arbitrary: fc.record({ path, value: anyValue, before: fc.boolean() }).map(({ path, value, before }) => ({ m: { op: 'dup' as const, path, value, before }, kind: 'dup-keys' })),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({ parent: fc.constantFrom<JsonPath>([], ...spec.mutablePaths.map((p) => p.slice(0, -1)).filter((p) => p.length > 0)), key: trickyKey, value: fc.oneof(anyValue, deepNode) })
        .map(({ parent, key, value }) => ({ m: { op: 'add' as const, path: [...parent, key], value }, kind: value.k === 'deep' ? 'deep' : 'extra-key' })),
    },
    { weight: 1, arbitrary: path.map((p) => ({ m: { op: 'drop' as const, path: p }, kind: 'missing-field' })) },
  );
  return fc.array(one, { minLength: 0, maxLength: 4 }).map((list) => ({ mutations: list.map((x) => x.m), kinds: [...new Set(list.map((x) => x.kind))] }));
}

function kindOf(value: JsonNode): string {
  if (value.k === 'deep') return 'deep';
  if (value.k === 'raw' && /^-?\d{16,}|e\d{3}/i.test(value.text)) return 'bigint';
  if (value.k === 'str') return 'unicode';
  return 'wrong-type';
}

function bodyPlans(spec: WebhookSpec<unknown>): fc.Arbitrary<BodyPlan> {
  const required = fc.integer({ min: 0, max: spec.requiredPaths.length - 1 }).chain((index) =>
    fc.record({
      p: fc.constant('required' as const),
      index: fc.constant(index),
      drop: fc.boolean(),
      value: (spec.requiredPaths[index] as { wrong: fc.Arbitrary<JsonNode> }).wrong,
      viaDuplicate: fc.boolean(),
    }),
  );
  return fc.oneof(
    { weight: 30, arbitrary: mutations(spec).map((m) => ({ p: 'mutated' as const, ...m })) },
    { weight: 3, arbitrary: fc.constantFrom(...invalidUtf8).map((bytes) => ({ p: 'invalid-utf8' as const, bytes: [...bytes] })) },
    { weight: 1, arbitrary: fc.record({ p: fc.constant('large' as const), fraction: fc.double({ min: 0.3, max: 0.9, noNaN: true }), unit: fc.constantFrom('a', '😀', 'ش', '\u0000', '\ud800') }) },
    { weight: 6, arbitrary: required },
    { weight: 5, arbitrary: fc.record({ p: fc.constant('truncated' as const), fraction: fc.double({ min: 0, max: 0.999, noNaN: true }) }) },
    { weight: 4, arbitrary: notAnObjectBody.map((text) => ({ p: 'not-object' as const, text })) },
    { weight: 2, arbitrary: fc.constantFrom('\u0000', '\u0001', '\n', '\u001f').map((char) => ({ p: 'unescaped-control' as const, char })) },
    {
      weight: 2,
      arbitrary: fc.record({ p: fc.constant('huge' as const), overBy: fc.integer({ min: 1, max: 512 * 1024 }), filler: fc.constantFrom('space' as const, 'string' as const, 'nested' as const) }),
    },
    { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS').map((method) => ({ p: 'wrong-method' as const, method })) },
    { weight: 1, arbitrary: fc.constantFrom(...spec.refusedContentTypes).map((contentType) => ({ p: 'refused-content-type' as const, contentType })) },
  );
}

/** The body bytes a plan makes of the case's valid tree. */
function renderBody<V>(spec: WebhookSpec<V>, variant: V, plan: BodyPlan, ctx: CaseContext): Buffer {
  const tree = () => spec.tree(variant, ctx);
  const limit = ctx.target.bodyLimitBytes ?? 1024 * 1024;
  switch (plan.p) {
    case 'mutated':
      return Buffer.from(renderJson(applyMutations(tree(), plan.mutations)));
    case 'invalid-utf8': {
      const text = renderJson(applyMutations(tree(), [{ op: 'set', path: spec.textPath, value: str(`odd ${marker} bytes`) }]));
      const [before, after] = text.split(JSON.stringify(marker).slice(1, -1));
      return Buffer.concat([Buffer.from(before ?? ''), Buffer.from(plan.bytes), Buffer.from(after ?? '')]);
    }
    case 'large': {
      const unitBytes = Buffer.byteLength(JSON.stringify(plan.unit)) - 2;
      const text = plan.unit.repeat(Math.floor((limit * plan.fraction) / unitBytes));
      return Buffer.from(renderJson(applyMutations(tree(), [{ op: 'set', path: spec.textPath, value: str(text) }])));
    }
    case 'required': {
      const { path } = spec.requiredPaths[plan.index] as { path: JsonPath };
      // A twin after the real key wins in JSON.parse, so it breaks the body as surely as a replacement.
      const mutation: Mutation = plan.drop ? { op: 'drop', path } : plan.viaDuplicate ? { op: 'dup', path, value: plan.value, before: false } : { op: 'set', path, value: plan.value };
      return Buffer.from(renderJson(applyMutations(tree(), [mutation])));
    }
    case 'truncated': {
      const full = Buffer.from(renderJson(tree()));
      return full.subarray(0, Math.floor(full.length * plan.fraction));
    }
    case 'not-object':
      return Buffer.from(plan.text);
    case 'unescaped-control': {
      const text = renderJson(applyMutations(tree(), [{ op: 'set', path: spec.textPath, value: { k: 'str', value: `before${plan.char}after`, unescaped: true } }]));
      return Buffer.from(text);
    }
    case 'huge': {
      const target = limit + plan.overBy;
      if (plan.filler === 'space') {
        const base = Buffer.from(renderJson(tree()));
        return Buffer.concat([base, Buffer.alloc(Math.max(0, target - base.length), 0x20)]);
      }
      if (plan.filler === 'nested') return Buffer.from(`${'['.repeat(Math.ceil(target / 2))}${']'.repeat(Math.ceil(target / 2))}`);
      return Buffer.from(renderJson(applyMutations(tree(), [{ op: 'set', path: spec.textPath, value: str('x'.repeat(target)) }])));
    }
    case 'wrong-method':
    case 'refused-content-type':
      return Buffer.from(renderJson(tree()));
  }
}

function planKinds(plan: BodyPlan): string[] {
  switch (plan.p) {
    case 'mutated':
      return plan.kinds.length > 0 ? plan.kinds : ['valid'];
    case 'required':
      return [plan.drop ? 'missing-field' : plan.viaDuplicate ? 'dup-keys' : 'wrong-type'];
    case 'not-object':
      return ['not-json'];
    case 'refused-content-type':
      return ['content-type'];
    default:
      return [plan.p];
  }
}

/** Authentic plans keep the body parseable; everything else certainly fails to parse or is refused before parsing. */
function planIsAuthentic(plan: BodyPlan): boolean {
  return plan.p === 'mutated' || plan.p === 'invalid-utf8' || plan.p === 'large';
}

function pick(variants: readonly AuthVariant[]): fc.Arbitrary<AuthVariant> {
  return fc.oneof(...variants.map((variant) => ({ weight: variant.weight ?? 1, arbitrary: fc.constant(variant) })));
}

/**
 * Cases for one webhook route: a valid body of one of the route's shapes,
 * then a body plan (mutated values, invalid UTF-8, a required field broken,
 * truncated, not JSON, past the body limit, wrong method or content type),
 * then an authentication variant. The class follows from the last two.
 */
export function webhookCases<V>(spec: WebhookSpec<V>): fc.Arbitrary<FuzzCase> {
  return fc
    .record({
      variant: spec.variant,
      plan: bodyPlans(spec as WebhookSpec<unknown>),
      auth: fc.oneof({ weight: 3, arbitrary: pick(spec.auth.filter((a) => a.valid)) }, { weight: 2, arbitrary: pick(spec.auth.filter((a) => !a.valid)) }),
      contentType: fc.oneof({ weight: 9, arbitrary: fc.constant<string | null>('application/json') }, { weight: 1, arbitrary: fc.constantFrom(...spec.oddContentTypes) }),
      // One case in forty is cut off on the wire.
      truncatedOnTheWire: fc.oneof({ weight: 39, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.double({ min: 0, max: 0.95, noNaN: true }) }),
    })
    .map(({ variant, plan, auth, contentType, truncatedOnTheWire }): FuzzCase => {
      // An odd content type on a parseable body stays authentic: the gateway may take it or refuse it, and rows are counted from its answers.
      const cls: FuzzClass = !auth.valid ? 'unauthenticated' : planIsAuthentic(plan) && truncatedOnTheWire === null ? 'authentic' : 'invalid';
      const kinds = [...planKinds(plan), ...(auth.valid ? [] : ['bad-auth']), `auth:${auth.name}`, ...(contentType !== 'application/json' ? [`content-type:${contentType ?? 'none'}`] : []), ...(truncatedOnTheWire !== null ? ['aborted'] : [])];
      return {
        route: spec.route,
        cls,
        kinds,
        // In a content type the route does not read (none, a form, ...) there is no body to verify against: 401 is right then.
        mayBeRefused: contentType !== 'application/json',
        build(ctx): BuiltRequest {
          const body = renderBody(spec, variant, plan, ctx);
          const signed = auth.headers(body, ctx);
          const type = plan.p === 'refused-content-type' ? plan.contentType : contentType;
          const headers: [string, string][] = [...(type !== null ? [['content-type', type] as [string, string]] : []), ...(Array.isArray(signed) ? signed : Object.entries(signed))];
          return {
            method: plan.p === 'wrong-method' ? plan.method : 'POST',
            path: spec.path,
            headers,
            body,
            transport: truncatedOnTheWire !== null ? 'raw-truncated' : auth.raw ? 'raw' : 'http',
            ...(truncatedOnTheWire !== null ? { sendFraction: truncatedOnTheWire } : {}),
          };
        },
      };
    });
}
