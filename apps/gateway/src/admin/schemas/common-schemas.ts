import { Type, type TSchema } from '@fastify/type-provider-typebox';

/** Every admin error: a stable code callers branch on, a sentence for people, the offending field for 400s. */
export const ErrorResponse = Type.Object(
  {
    ok: Type.Literal(false),
    error: Type.String({ description: 'Stable error code, e.g. CONVERSATION_NOT_FOUND, INVALID_REQUEST' }),
    message: Type.Optional(Type.String()),
    field: Type.Optional(Type.String({ description: 'The request field that was wrong (400 only)' })),
  },
);

export const Timestamp = Type.String({ format: 'date-time' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
export const NullableInteger = Type.Union([Type.Integer(), Type.Null()]);
export const NullableString = Type.Union([Type.String(), Type.Null()]);

/**
 * A row id as a client may name it. Ids are bigint in Postgres but numbers
 * here, exact only up to 2^53 - 1; and a value past bigint's range (or one so
 * large it is written `1e+24`) failed every query it reached with a 500
 * (found by the fuzzer, issue 17). Past the bound: 400 INVALID_REQUEST.
 */
export const RowId = (options: { description?: string } = {}) => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, ...options });

export const IdParams = Type.Object({ id: RowId({ description: 'Numeric id' }) });

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  cursor: Type.Optional(RowId({ description: 'nextCursor of the previous page' })),
};

export const NextCursor = Type.Union([Type.Integer(), Type.Null()], { description: 'Pass as cursor for the next page; null on the last page' });

export const platforms = ['slack', 'discord', 'telegram'] as const;
export const busyModes = ['interrupt', 'queue', 'collect', 'steer'] as const;
export const conversationStatuses = ['active', 'suspended'] as const;

/** Error responses a route documents, e.g. `...errors(400, 404)`. */
export function errors(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries([401, 429, ...statuses].map((status) => [status, ErrorResponse]));
}

export function toIso(date: Date): string;
export function toIso(date: Date | null): string | null;
export function toIso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}
