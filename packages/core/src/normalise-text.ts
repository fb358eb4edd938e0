/**
 * ES2024's String.prototype.toWellFormed exists on Node 20, but the shared
 * tsconfig targets the ES2023 lib; typing it here avoids widening the lib for
 * the whole tree.
 */
type WellFormable = string & { toWellFormed(): string };

/**
 * Text as Postgres can store it and encodeURIComponent can encode it: U+0000
 * removed (Postgres rejects NUL in text and jsonb) and lone surrogates replaced
 * with U+FFFD (they are not valid UTF-8). Applied where a payload is parsed, so
 * one hostile message can never block a platform's inbound stream.
 */
export function normaliseText(text: string): string {
  const withoutNul = text.includes('\u0000') ? text.replaceAll('\u0000', '') : text;
  return (withoutNul as WellFormable).toWellFormed();
}

/** normaliseText for the string values of a flat record (reply targets); other values pass through. */
export function normaliseStringValues<T extends Record<string, unknown>>(record: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) out[key] = typeof value === 'string' ? normaliseText(value) : value;
  return out as T;
}
