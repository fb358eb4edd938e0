import fc from 'fast-check';

/**
 * JSON written as text, not through JSON.stringify: the fuzzer needs what a
 * serialiser never produces (duplicate keys, integers past 2^53 as raw
 * number literals, `1e400`, control characters left unescaped, nesting a
 * hundred thousand levels deep) and must sign the exact bytes it sends.
 */
export type JsonNode =
  /** Written as is: number literals of any size, true/false/null, or deliberately broken text. */
  | { k: 'raw'; text: string }
  /** A string; `unescaped` writes control characters and lone surrogates as they are (invalid JSON, or U+FFFD once encoded). */
  | { k: 'str'; value: string; unescaped?: boolean }
  | { k: 'arr'; items: JsonNode[] }
  /** Keys may repeat: JSON.parse keeps the last one. */
  | { k: 'obj'; entries: [string, JsonNode][] }
  /** `depth` arrays or objects around `leaf`, written by repetition so rendering never recurses that deep. */
  | { k: 'deep'; depth: number; shape: 'arr' | 'obj'; leaf: JsonNode };

export const raw = (text: string): JsonNode => ({ k: 'raw', text });
export const str = (value: string): JsonNode => ({ k: 'str', value });
export const num = (value: number | bigint): JsonNode => ({ k: 'raw', text: String(value) });
export const arr = (...items: JsonNode[]): JsonNode => ({ k: 'arr', items });
export const obj = (entries: Record<string, JsonNode | undefined>): JsonNode & { k: 'obj' } => ({
  k: 'obj',
  entries: Object.entries(entries).filter((entry): entry is [string, JsonNode] => entry[1] !== undefined),
});

export function renderJson(node: JsonNode): string {
  switch (node.k) {
    case 'raw':
      return node.text;
    case 'str':
      return node.unescaped ? `"${node.value.replace(/["\\]/g, (c) => `\\${c}`)}"` : JSON.stringify(node.value);
    case 'arr':
      return `[${node.items.map(renderJson).join(',')}]`;
    case 'obj':
      return `{${node.entries.map(([key, value]) => `${JSON.stringify(key)}:${renderJson(value)}`).join(',')}}`;
    case 'deep': {
      const leaf = renderJson(node.leaf);
      return node.shape === 'arr' ? `${'['.repeat(node.depth)}${leaf}${']'.repeat(node.depth)}` : `${'{"d":'.repeat(node.depth)}${leaf}${'}'.repeat(node.depth)}`;
    }
  }
}

/** A path of object keys from the root; the value at it is replaced, removed or given a twin. */
export type JsonPath = readonly string[];

export type Mutation =
  | { op: 'set'; path: JsonPath; value: JsonNode }
  | { op: 'drop'; path: JsonPath }
  /** A second entry with the same key, before or after the real one (JSON.parse keeps the later). */
  | { op: 'dup'; path: JsonPath; value: JsonNode; before: boolean }
  /** A new key beside the last element of the path. */
  | { op: 'add'; path: JsonPath; value: JsonNode };

/** Applies mutations to a tree built fresh for the case; a path that does not exist (an earlier drop) is skipped. */
export function applyMutations(root: JsonNode, mutations: readonly Mutation[]): JsonNode {
  for (const mutation of mutations) {
    const parent = objectAt(root, mutation.path.slice(0, -1));
    const key = mutation.path[mutation.path.length - 1];
    if (!parent || key === undefined) continue;
    const index = parent.entries.findIndex(([name]) => name === key);
    switch (mutation.op) {
      case 'set':
        if (index === -1) parent.entries.push([key, mutation.value]);
        else parent.entries[index] = [key, mutation.value];
        break;
      case 'drop':
        parent.entries = parent.entries.filter(([name]) => name !== key);
        break;
      case 'dup':
        if (mutation.before) parent.entries.splice(Math.max(index, 0), 0, [key, mutation.value]);
        else parent.entries.push([key, mutation.value]);
        break;
      case 'add':
        parent.entries.push([key, mutation.value]);
        break;
    }
  }
  return root;
}

function objectAt(root: JsonNode, path: JsonPath): (JsonNode & { k: 'obj' }) | undefined {
  let node: JsonNode | undefined = root;
  for (const key of path) {
    if (node?.k !== 'obj') return undefined;
    node = node.entries.findLast(([name]) => name === key)?.[1];
  }
  return node?.k === 'obj' ? node : undefined;
}

/**
 * Strings chosen to break things: U+0000, lone and reversed surrogates, bidi
 * controls and RTL text, 4-byte characters and long emoji sequences, BOM and
 * noncharacters, line separators, C0/C1 controls, and text that means
 * something further on (commands, Slack mentions, a bad percent-escape).
 */
export const edgeFragments = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\ude00\ud83d',
  'x\ud83d',
  '\u202e',
  '\u202d\u202c',
  '\u200f',
  '\u200e',
  '\u2066\u2069',
  '\u061c',
  'مرحبا بالعالم',
  'שלום עולם',
  '😀',
  '👩‍👩‍👧‍👦',
  '𝕏𝔸𝕄',
  '\u{10FFFF}',
  '\u{1F1FA}\u{1F1F8}',
  '\ufeff',
  '\ufffe\uffff',
  'e\u0301\u0301\u0301',
  '\u200b',
  '\u2028\u2029',
  '\u0001\u001f',
  '\u007f\u0085',
  '\r\n',
  '\t',
  '"',
  '\\',
  '\\u0000',
  '/stop',
  '/compact',
  '/new',
  '/busy queue',
  '!stop',
  '<!channel>',
  '<@U0BOT>',
  '%E0%A4%A',
  '%00',
  '${x}',
  "'; drop table conversations; --",
  'null',
  '9007199254740993',
  ' ',
  '',
] as const;

/** Text of any kind, biased to the edge fragments; now and then long. */
export const fuzzText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...edgeFragments) },
  {
    weight: 4,
    arbitrary: fc
      .array(fc.oneof(fc.constantFrom(...edgeFragments), fc.string({ unit: 'binary', maxLength: 8 }), fc.string({ maxLength: 12 })), { minLength: 1, maxLength: 10 })
      .map((parts) => parts.join('')),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('a', '😀', '\u0000', '\ud800', 'ש', '\u202e', ' '), fc.integer({ min: 500, max: 20_000 })).map(([c, n]) => c.repeat(n)) },
);

/**
 * Number literals past what a double holds exactly, or past a double at
 * all: 2^53 + 1, 2^64, 2^63 (bigint's edge), 1e400 (Infinity once parsed),
 * -0, and integers written as 1.0 or 1e2.
 */
export const bigNumberText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '9007199254740993',
    '9007199254740992',
    '-9007199254740993',
    '18446744073709551616',
    '18446744073709551615',
    '9223372036854775807',
    '9223372036854775808',
    '-9223372036854775809',
    '123456789012345678901234567890',
    '1e21',
    '1e308',
    '1e309',
    '-1e400',
    '1E400',
    '1.7976931348623157e308',
    '5e-324',
    '1e-400',
    '1.0',
    '1e2',
    '-0',
    '0e0',
  ),
  fc.bigInt({ min: 2n ** 53n, max: 2n ** 70n }).map(String),
  fc.bigInt({ min: -(2n ** 70n), max: -(2n ** 53n) }).map(String),
);

/** Nesting from a few levels to hundreds of thousands (300k arrays is 600 KB, still under the 1 MiB body limit). */
export const deepNode: fc.Arbitrary<JsonNode> = fc
  .record({
    depth: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 2, max: 64 }) }, { weight: 2, arbitrary: fc.integer({ min: 1_000, max: 20_000 }) }, { weight: 1, arbitrary: fc.constantFrom(100_000, 300_000) }),
    shape: fc.constantFrom('arr' as const, 'obj' as const),
    leaf: fc.constantFrom(raw('1'), raw('null'), str('leaf'), raw('{}')),
  })
  .map(({ depth, shape, leaf }) => ({ k: 'deep', depth: shape === 'obj' ? Math.min(depth, 150_000) : depth, shape, leaf }));

/** Any JSON value, mostly of a type the field does not expect. */
export const anyValue: fc.Arbitrary<JsonNode> = fc.oneof(
  { weight: 3, arbitrary: fuzzText.map(str) },
  { weight: 2, arbitrary: bigNumberText.map(raw) },
  { weight: 2, arbitrary: fc.constantFrom(raw('null'), raw('true'), raw('false'), raw('0'), raw('-1'), raw('[]'), raw('{}'), raw('""'), raw('[null]'), raw('{"":""}')) },
  { weight: 1, arbitrary: fc.integer().map(num) },
  { weight: 1, arbitrary: deepNode },
  { weight: 1, arbitrary: fc.array(fuzzText.map(str), { maxLength: 4 }).map((items) => arr(...items)) },
  { weight: 1, arbitrary: fc.dictionary(fuzzText, fuzzText.map(str), { maxKeys: 4 }).map((entries) => obj(entries)) },
);

/** Keys that mean something to a JSON parser or to JavaScript objects. */
export const trickyKey: fc.Arbitrary<string> = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', '\u0000', '\ud800', 'a.b', '$where'), fuzzText);

/** Text that is not valid JSON, or JSON of the wrong shape at the top level. */
export const notAnObjectBody: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', 'null', 'true', '0', '"text"', '[]', '[{}]', '{', '}', '{"a":1,}', "{'a':1}", '{"a":NaN}', '{"a":Infinity}', '{"a":1}/*c*/', '{"a":01}', '{"a":"\\x41"}', '{"a":"\\ud800"', 'undefined', '\ufeff{}'),
  fc.string({ unit: 'binary', maxLength: 200 }),
  bigNumberText,
);
