import fc from 'fast-check';
import type { JsonNode } from './json-text.ts';

/** An admin route as the fuzzer sends to it (admin-cases.ts), and the ids it fills in. */
export interface RouteShape {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** `{id}` is replaced by an id. */
  path: string;
  /** Changes something when the id exists: only unreachable ids with valid credentials. */
  mutating?: boolean;
  /** The id parameter is not numeric (a queue name, a job id). */
  stringParam?: boolean;
  query?: fc.Arbitrary<[string, string][]>;
  /** Query pairs the schema refuses. */
  badQuery?: fc.Arbitrary<[string, string][]>;
  body?: fc.Arbitrary<JsonNode | undefined>;
  /** Bodies the schema refuses. */
  badBody?: fc.Arbitrary<JsonNode>;
}

/** Ids no conversation, outbox row or session will ever have (>= 2^40), spelled every way the schema converts, up to past 2^63. */
export const unreachableId: fc.Arbitrary<string> = fc.oneof(
  fc.bigInt({ min: 2n ** 40n, max: 2n ** 53n - 1n }).map(String),
  fc.bigInt({ min: 2n ** 53n, max: 2n ** 80n }).map(String),
  fc.constantFrom('9007199254740991', '9007199254740993', '9223372036854775807', '9223372036854775808', '18446744073709551616', '99999999999999999999', '123456789012345678901234567890'),
  fc.bigInt({ min: 2n ** 40n, max: 2n ** 60n }).map((n) => `+${n}`),
  fc.bigInt({ min: 2n ** 40n, max: 2n ** 60n }).map((n) => `${n}.9`),
  fc.bigInt({ min: 2n ** 40n, max: 2n ** 60n }).map((n) => `000${n}`),
);
/** Any id a read may use, real ones included. */
export const readableId: fc.Arbitrary<string> = fc.oneof(fc.integer({ min: 1, max: 50 }).map(String), unreachableId);
/** Ids the schema refuses whatever it converts: not a number, zero or negative, too big for a double. (Not `..`: the client resolves it away.) */
export const refusedId: fc.Arbitrary<string> = fc.constantFrom('', 'x1', 'abc', '0', '-1', '-9007199254740993', 'NaN', 'Infinity', '1e400', '１２', '١٢', '1_000', 'false', 'null', '%00', '\u0000', '\ud800', '%E0%A4%A', '1;2', '1%2F2');
