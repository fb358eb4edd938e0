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

/** "ECONNREFUSED: connect ECONNREFUSED …" for a socket error, the message otherwise. */
export function describeFetchError(error: unknown): string {
  // A socket error carries its code itself; fetch would have hidden it in error.cause.
  const failure = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const coded = failure.code?.startsWith('E') ? failure : failure.cause;
  if (coded?.code) return `${coded.code}: ${coded.message ?? ''}`.trim();
  return error instanceof Error ? error.message : String(error);
}
