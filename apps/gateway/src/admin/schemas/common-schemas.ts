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

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, description: 'Numeric id' }) });

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  cursor: Type.Optional(Type.Integer({ minimum: 1, description: 'nextCursor of the previous page' })),
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
