/**
 * Helpers for the simulator's own outbound calls to the gateway (Telegram
 * webhooks, Slack events, Discord interactions): how the answer is recorded.
 */

/** The gateway's answer body as JSON when it is JSON, else as text, null when empty. */
export function parseAnswer(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Milliseconds since `startedAt` (a performance.now() reading), to 0.01 ms. */
export function elapsed(startedAt: number): number {
  return Math.round((performance.now() - startedAt) * 100) / 100;
}

// fetch hides the interesting part ("ECONNREFUSED") in error.cause.
export function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `${cause.code}: ${cause.message ?? ''}`.trim();
  return error instanceof Error ? error.message : String(error);
}
