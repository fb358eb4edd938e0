/**
 * The one list of stable error codes (docs/errors.md), in one case style
 * (UPPER_SNAKE). A code is what callers and clients branch on; `retryable`
 * says whether the same request can succeed later unchanged; `httpStatus` is
 * the status a response carrying the code answers with. Codes that appear in
 * HTTP bodies are a contract (DESIGN §3, docs/admin.md): never rename one.
 */
interface ErrorCodeSpec {
  family: 'ingress' | 'hook' | 'platform' | 'admin' | 'model' | 'worker' | 'config';
  retryable: boolean;
  httpStatus?: number;
}

export const errorCodes = {
  // Ingress: a webhook's 503, so the platform re-delivers.
  STORE_FAILED: { family: 'ingress', retryable: true, httpStatus: 503 },
  STORE_TOO_LATE: { family: 'ingress', retryable: true, httpStatus: 503 },
  ENQUEUE_FAILED: { family: 'ingress', retryable: true, httpStatus: 503 },

  // Triggered turns, POST /hooks/{name} (docs/tools.md, "Triggered turns"): nothing is stored for any of them.
  HOOK_NOT_FOUND: { family: 'hook', retryable: false, httpStatus: 404 },
  HOOK_SIGNATURE_INVALID: { family: 'hook', retryable: false, httpStatus: 401 },
  HOOK_DELIVERY_INVALID: { family: 'hook', retryable: false, httpStatus: 400 },
  /** The hook's conversation no longer exists (deleted): an operator must fix HOOKS_FILE. */
  HOOK_CONVERSATION_MISSING: { family: 'hook', retryable: false, httpStatus: 409 },
  /** The hook's conversation is suspended: refused until an operator resumes it. */
  HOOK_CONVERSATION_SUSPENDED: { family: 'hook', retryable: false, httpStatus: 409 },
  HOOK_RATE_LIMITED: { family: 'hook', retryable: true, httpStatus: 429 },

  // Schedules (docs/schedules.md): the admin API's bodies, and the `schedule` tool's error text.
  /** A schedule's prompt, time, cron or time zone is not one that can run: nothing stored. */
  SCHEDULE_INVALID: { family: 'admin', retryable: false, httpStatus: 400 },
  /** The user already holds USER_MAX_SCHEDULES active schedules: nothing stored. */
  SCHEDULE_LIMIT: { family: 'admin', retryable: false, httpStatus: 409 },
  /** No active schedule has this id (in this conversation, for chat and the tool). */
  SCHEDULE_NOT_FOUND: { family: 'admin', retryable: false, httpStatus: 404 },

  // Platforms: a parser refusing an inbound event (400), or a platform API refusing a send.
  INVALID_PAYLOAD: { family: 'platform', retryable: false, httpStatus: 400 },
  RATE_LIMITED: { family: 'platform', retryable: true },
  REJECTED: { family: 'platform', retryable: false },
  UNAVAILABLE: { family: 'platform', retryable: true },
  /** A user's file over MEDIA_MAX_BYTES (announced or while downloading): refused with one short reply (docs/media.md). */
  FILE_TOO_LARGE: { family: 'platform', retryable: false },
  /** A user's file could not be downloaded (an error status, a timeout, a refused URL): the user is told (docs/media.md). */
  FILE_FETCH_FAILED: { family: 'platform', retryable: false },
  /** A user's file is not on the platform's own file hosts (a Slack remote file, a URL or redirect to another host): not fetched, the user is told. */
  FILE_REFUSED: { family: 'platform', retryable: false },

  // Admin API bodies.
  UNAUTHORIZED: { family: 'admin', retryable: false, httpStatus: 401 },
  TOO_MANY_FAILURES: { family: 'admin', retryable: true, httpStatus: 429 },
  FORBIDDEN_ORIGIN: { family: 'admin', retryable: false, httpStatus: 403 },
  INVALID_REQUEST: { family: 'admin', retryable: false, httpStatus: 400 },
  CONFIRMATION_MISMATCH: { family: 'admin', retryable: false, httpStatus: 400 },
  CONVERSATION_NOT_FOUND: { family: 'admin', retryable: false, httpStatus: 404 },
  SESSION_NOT_FOUND: { family: 'admin', retryable: false, httpStatus: 404 },
  OUTBOX_NOT_FOUND: { family: 'admin', retryable: false, httpStatus: 404 },
  QUEUE_NOT_FOUND: { family: 'admin', retryable: false, httpStatus: 404 },
  JOB_NOT_FOUND: { family: 'admin', retryable: false, httpStatus: 404 },
  ALREADY_SUSPENDED: { family: 'admin', retryable: false, httpStatus: 409 },
  NOT_SUSPENDED: { family: 'admin', retryable: false, httpStatus: 409 },
  ALREADY_SENT: { family: 'admin', retryable: false, httpStatus: 409 },
  JOB_NOT_FAILED: { family: 'admin', retryable: false, httpStatus: 409 },
  /** No pending pairing has this code (unknown, malformed, or already approved): nothing changed. */
  PAIRING_NOT_FOUND: { family: 'admin', retryable: false, httpStatus: 404 },
  /** The code's hour is over: it can no longer be approved; the user asks again for a new one. */
  PAIRING_EXPIRED: { family: 'admin', retryable: false, httpStatus: 410 },
  PAIRED_USER_NOT_FOUND: { family: 'admin', retryable: false, httpStatus: 404 },
  READ_ONLY: { family: 'admin', retryable: false, httpStatus: 405 },
  /** The full-access Codex profile while CODEX_ALLOW_FULL_ACCESS is off (docs/codex.md). */
  FULL_ACCESS_DISABLED: { family: 'admin', retryable: false, httpStatus: 403 },
  REDIS_UNAVAILABLE: { family: 'admin', retryable: true, httpStatus: 503 },
  INTERNAL_ERROR: { family: 'admin', retryable: false, httpStatus: 500 },

  // The model, as the worker sees it.
  MODEL_FAILED: { family: 'model', retryable: false },
  MODEL_RATE_LIMITED: { family: 'model', retryable: true },
  MODEL_REFUSED: { family: 'model', retryable: false },
  MODEL_TIMEOUT: { family: 'model', retryable: true },
  /** The runtime's child process (codex app-server) died or broke its protocol mid-turn (docs/codex.md). */
  RUNTIME_CRASHED: { family: 'model', retryable: false },
  /** The conversation's chosen model (set by an operator) is not MODEL_NAME nor in MODEL_FALLBACKS: the turn fails with a notice (docs/turns.md "Model fallbacks"). */
  MODEL_NOT_CONFIGURED: { family: 'model', retryable: false },
  /** The transcription endpoint (TRANSCRIBE_BASE_URL) failed or timed out for a voice message (docs/media.md). */
  TRANSCRIBE_FAILED: { family: 'model', retryable: false },

  // The worker and start-up; never in a response body.
  CONVERSATION_BUSY: { family: 'worker', retryable: true },
  ACTION_NEEDS_REACH: { family: 'worker', retryable: false },
  /** CODEX_SANDBOX=bwrap and bubblewrap is missing or cannot make its namespaces here: the worker starts no Codex child, each Codex turn fails with a notice (docs/codex.md). */
  CODEX_SANDBOX_UNAVAILABLE: { family: 'worker', retryable: false },
  /** A Codex child asked the worker's proxy for a destination outside its model provider and CODEX_SANDBOX_ALLOW_HOSTS: refused with 403, logged (docs/codex.md, "The child's network"). */
  CODEX_NET_REFUSED: { family: 'worker', retryable: false },
  CONFIG_INVALID: { family: 'config', retryable: false },
  ADMIN_TOKEN_INVALID: { family: 'config', retryable: false },
} as const satisfies Record<string, ErrorCodeSpec>;

export type ErrorCode = keyof typeof errorCodes;
export type ErrorFamily = ErrorCodeSpec['family'];

/** The codes of one family, e.g. `ErrorCodeOf<'admin'>`. */
export type ErrorCodeOf<F extends ErrorFamily> = { [K in ErrorCode]: (typeof errorCodes)[K]['family'] extends F ? K : never }[ErrorCode];

/** What an error says about itself wherever it is reported (OpenClaw's errorShape). */
export interface ErrorShape {
  code: ErrorCode;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
}

export function isRetryableCode(code: ErrorCode): boolean {
  return errorCodes[code].retryable;
}

export function shapeError(code: ErrorCode, message: string, retryAfterMs?: number): ErrorShape {
  return { code, message, retryable: isRetryableCode(code), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}
