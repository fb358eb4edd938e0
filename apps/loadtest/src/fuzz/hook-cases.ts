import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import type { BuiltRequest, CaseContext, FuzzCase, FuzzClass } from './fuzz-types.ts';
import { anyValue, deepNode, fuzzText, notAnObjectBody, renderJson } from './json-text.ts';

/**
 * `POST /hooks/{name}` (docs/tools.md, "Triggered turns"). Any bytes are a
 * body (the prompt's `{{body}}` is the body as text), so unlike the
 * platforms' webhooks no body is invalid by its shape: what makes a case
 * invalid is its signature, its delivery id, its size, its method or its name.
 */
type Body = { b: 'text'; text: string } | { b: 'json'; text: string } | { b: 'bytes'; bytes: number[] } | { b: 'large'; fraction: number; unit: string } | { b: 'empty' };

type Auth = 'valid' | 'none' | 'empty' | 'wrong-key' | 'other-body' | 'upper-case' | 'no-prefix' | 'sha1' | 'duplicate-header' | 'nul-byte';
const validAuth: readonly Auth[] = ['valid'];
const badAuth: readonly Auth[] = ['none', 'empty', 'wrong-key', 'other-body', 'upper-case', 'no-prefix', 'sha1', 'duplicate-header', 'nul-byte'];

/** What else is wrong with a signed case: nothing, or one thing that makes it invalid. */
type Defect = 'none' | 'duplicate-delivery' | 'no-delivery' | 'long-delivery' | 'space-delivery' | 'unknown-name' | 'huge' | 'wrong-method';

const body: fc.Arbitrary<Body> = fc.oneof(
  { weight: 4, arbitrary: fuzzText.map((text) => ({ b: 'text' as const, text })) },
  { weight: 3, arbitrary: fc.oneof(anyValue, deepNode).map((node) => ({ b: 'json' as const, text: renderJson(node) })) },
  { weight: 1, arbitrary: notAnObjectBody.map((text) => ({ b: 'text' as const, text })) },
  { weight: 2, arbitrary: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 64 }).map((bytes) => ({ b: 'bytes' as const, bytes })) },
  { weight: 1, arbitrary: fc.record({ b: fc.constant('large' as const), fraction: fc.double({ min: 0.3, max: 0.9, noNaN: true }), unit: fc.constantFrom('a', '😀', '\u0000', '{{body}}') }) },
  { weight: 1, arbitrary: fc.constant({ b: 'empty' as const }) },
);

function bodyBytes(plan: Body, limit: number): Buffer {
  switch (plan.b) {
    case 'text':
    case 'json':
      return Buffer.from(plan.text);
    case 'bytes':
      return Buffer.from(plan.bytes);
    case 'large':
      return Buffer.from(plan.unit.repeat(Math.floor((limit * plan.fraction) / Buffer.byteLength(plan.unit))));
    case 'empty':
      return Buffer.alloc(0);
  }
}

const sign = (secret: string, bytes: Buffer | string, algorithm = 'sha256') => createHmac(algorithm, secret).update(bytes).digest('hex');

function signatureHeaders(auth: Auth, secret: string, bytes: Buffer): [string, string][] {
  const header = 'x-switchboard-signature';
  const good = `sha256=${sign(secret, bytes)}`;
  switch (auth) {
    case 'valid':
      return [[header, good]];
    case 'none':
      return [];
    case 'empty':
      return [[header, '']];
    case 'wrong-key':
      return [[header, `sha256=${sign(`${secret}x`, bytes)}`]];
    case 'other-body':
      return [[header, `sha256=${sign(secret, Buffer.concat([bytes, Buffer.from(' ')]))}`]];
    case 'upper-case':
      return [[header, `sha256=${sign(secret, bytes).toUpperCase()}`]];
    case 'no-prefix':
      return [[header, sign(secret, bytes)]];
    case 'sha1':
      return [[header, `sha1=${sign(secret, bytes, 'sha1')}`]];
    case 'duplicate-header':
      return [[header, good], [header, good]];
    case 'nul-byte':
      return [[header, `${good}\u0000`]];
  }
}

function deliveryHeaders(defect: Defect, ctx: CaseContext): [string, string][] {
  const header = 'x-switchboard-delivery';
  // Unique per case (the run's tag and the case's number); a duplicate reuses the case before's, which may or may not exist.
  const id = `fz-${ctx.tag}-${ctx.seq}`;
  switch (defect) {
    case 'duplicate-delivery':
      return [[header, `fz-${ctx.tag}-${Math.max(0, ctx.seq - 1)}`]];
    case 'no-delivery':
      return [];
    case 'long-delivery':
      return [[header, `${id}-${'x'.repeat(200)}`]];
    case 'space-delivery':
      return [[header, `${id} with spaces`]];
    default:
      return [[header, id]];
  }
}

const defects: readonly Defect[] = ['no-delivery', 'long-delivery', 'space-delivery', 'unknown-name', 'huge', 'wrong-method'];

/** The class a case's signature and defect give it. A duplicate delivery stays authentic: its answer is a 2xx that stores nothing new. */
function classOf(auth: Auth, defect: Defect, aborted: boolean): FuzzClass {
  if (auth !== 'valid') return 'unauthenticated';
  return defect === 'none' || defect === 'duplicate-delivery' ? (aborted ? 'invalid' : 'authentic') : 'invalid';
}

export const hookCases: fc.Arbitrary<FuzzCase> = fc
  .record({
    body,
    auth: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...validAuth) }, { weight: 2, arbitrary: fc.constantFrom(...badAuth) }),
    defect: fc.oneof({ weight: 12, arbitrary: fc.constant<Defect>('none') }, { weight: 2, arbitrary: fc.constant<Defect>('duplicate-delivery') }, { weight: 4, arbitrary: fc.constantFrom(...defects) }),
    contentType: fc.constantFrom<string | null>('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', null, 'multipart/form-data; boundary=x'),
    aborted: fc.oneof({ weight: 39, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.double({ min: 0, max: 0.95, noNaN: true }) }),
  })
  .map(({ body: plan, auth, defect, contentType, aborted }): FuzzCase => {
    const cls = classOf(auth, defect, aborted !== null);
    const kinds = [plan.b, `auth:${auth}`, ...(auth !== 'valid' ? ['bad-auth'] : []), ...(defect !== 'none' ? [defect] : []), `content-type:${contentType ?? 'none'}`, ...(aborted !== null ? ['aborted'] : [])];
    return {
      route: 'hooks',
      cls,
      kinds,
      build(ctx): BuiltRequest {
        const hook = ctx.target.hooks ?? { name: 'fuzz', secret: '' };
        const limit = ctx.target.bodyLimitBytes ?? 1024 * 1024;
        const bytes = defect === 'huge' ? Buffer.alloc(limit + 1 + (ctx.seq % 4096), 0x61) : bodyBytes(plan, limit);
        const headers: [string, string][] = [...(contentType !== null ? [['content-type', contentType] as [string, string]] : []), ...signatureHeaders(auth, hook.secret, bytes), ...deliveryHeaders(defect, ctx)];
        const raw = auth === 'duplicate-header' || auth === 'nul-byte';
        return {
          method: defect === 'wrong-method' ? 'PUT' : 'POST',
          path: `/hooks/${defect === 'unknown-name' ? `${hook.name}-not-configured` : hook.name}`,
          headers,
          body: bytes,
          transport: aborted !== null ? 'raw-truncated' : raw ? 'raw' : 'http',
          ...(aborted !== null ? { sendFraction: aborted } : {}),
        };
      },
    };
  });
