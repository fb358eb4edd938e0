/** `hooks` (issue 34): `POST /hooks/{name}` of a gateway with HOOKS_FILE (hook-cases.ts); after `pairing`, for the same reason. */
/** `pairing` (issue 30): unpaired users' DMs on every platform and the pairing admin routes, for a gateway with DM_POLICY=pairing (pairing-cases.ts). Last, so the other routes' seeds keep their cases. */
export const fuzzRoutes = ['slack', 'telegram', 'discord', 'admin', 'pairing', 'hooks'] as const;
export type FuzzRoute = (typeof fuzzRoutes)[number];

/**
 * What a case is, and so what it may get:
 * - `unauthenticated`: a missing, wrong, stale or tampered signature, secret
 *   token or admin credential. Never 2xx, never a row.
 * - `invalid`: authenticated, but the request cannot be served as it is
 *   (truncated or non-JSON body, a required field missing or of the wrong
 *   type, a body past the limit, a wrong content type, a bad admin id or
 *   query). A 4xx, or a 200 that ignores it; never a row.
 * - `authentic`: authenticated and well-formed enough that the gateway may
 *   act on it, with odd values anywhere (unicode edge cases, ids past 2^53,
 *   duplicate keys, deep nesting in fields it does not read). Anything but a
 *   5xx; it may write rows (an inbound event per `accepted` or `refused`
 *   outcome, an audit row per admin action).
 */
export type FuzzClass = 'unauthenticated' | 'invalid' | 'authentic';
export const fuzzClasses: readonly FuzzClass[] = ['unauthenticated', 'invalid', 'authentic'];

/** The gateway under test and the secrets a platform (or an operator) would hold. A route whose entry is absent is not fuzzed. */
export interface FuzzTarget {
  baseUrl: string;
  slack?: { signingSecret: string };
  /** `botId` is the numeric prefix of the bot token: a group message replying to it is addressed to the bot. */
  telegram?: { webhookSecret: string; botId?: string };
  /** Signs `timestamp + body` with the application's Ed25519 private key; hex signature (see `createDiscordSigner`). */
  discord?: { applicationId: string; sign(timestamp: string, body: Buffer): string };
  admin?: { tokens: readonly { name: string; token: string }[] };
  /** The gateway runs DM_POLICY=pairing with nobody allowlisted: the `pairing` route is fuzzed (its platforms' and the admin API's entries above are needed too). */
  pairing?: { maxPendingPerPlatform: number };
  /** A hook of the gateway's HOOKS_FILE whose conversation exists: the `hooks` route is fuzzed (its calls store input there). */
  hooks?: { name: string; secret: string };
  /** The gateway's BODY_LIMIT_BYTES (default 1 MiB): "huge" bodies are made just past it. */
  bodyLimitBytes?: number;
  /**
   * Source addresses for admin requests with wrong credentials. The gateway
   * blocks an address after ten failures a minute (then even a right token
   * gets 429), so guesses come from their own addresses and never lock out
   * the authentic cases, or the operator or harness using the same gateway.
   * Loopback targets get 127.0.1.1–127.0.4.254 by default (Linux routes all
   * of 127/8 to lo); elsewhere guesses share the default address.
   */
  guessingAddresses?: readonly string[];
}

export interface CaseContext {
  /** The case's number in its route's stream: ids derived from it make every event id unique within a run. */
  seq: number;
  /** Digits unique to this run (default: from the seed), so a second run against the same database does not collide. */
  tag: string;
  target: FuzzTarget;
  nowMs: number;
}

export interface BuiltRequest {
  method: string;
  /** Path and query exactly as sent. */
  path: string;
  /** In order; a name may repeat (only the raw transports send a repeated name as two lines). */
  headers: [string, string][];
  body?: Buffer;
  /** raw-truncated: the share of the body written before the socket is closed. */
  sendFraction?: number;
  /**
   * `http`: an ordinary request. `raw`: written byte for byte on a fresh
   * socket (header bytes no HTTP client would send). `raw-truncated`: a body
   * shorter than its Content-Length, then the socket is closed: the gateway
   * sees an aborted request and owes no answer.
   */
  transport: 'http' | 'raw' | 'raw-truncated';
  /** Admin requests with wrong credentials come from the guessing addresses. */
  guessing?: boolean;
}

export interface FuzzCase {
  route: FuzzRoute;
  cls: FuzzClass;
  /** What was generated, for the summary: `bad-signature`, `truncated`, `huge`, `deep`, `dup-keys`, `bigint`, `unicode`, `content-type`, ... */
  kinds: readonly string[];
  /** Valid credentials the gateway may still refuse: a body in no or an odd content type is not read, so nothing verifies (401 is right). */
  mayBeRefused?: boolean;
  /** The target entry the case is sent with, when it is not the route's own (a `pairing` case goes to a platform's webhook or the admin API): without it the case is skipped. */
  needs?: 'slack' | 'telegram' | 'discord' | 'admin';
  /** Called at send time, so signatures carry the current time. */
  build(ctx: CaseContext): BuiltRequest;
}

export interface FuzzExample {
  route: FuzzRoute;
  cls: FuzzClass;
  /** Index in the route's stream: `--seed S` and this index reproduce the case. */
  seq: number;
  kinds: readonly string[];
  method: string;
  path: string;
  status: number;
  /** Why it is listed (a 5xx, or the rule the answer broke). */
  problem: string;
  /** The first bytes of the request body and of the answer. */
  requestPreview: string;
  responsePreview: string;
}

export interface RouteFigures {
  sent: number;
  /** HTTP status → count; `none` when the gateway owed no answer and gave none (aborted request); `closed` when it cut off a body past the limit. */
  byStatus: Record<string, number>;
  byClass: Record<FuzzClass, { sent: number; byStatus: Record<string, number> }>;
  byKind: Record<string, number>;
  /** Outcomes the webhook routes reported (`accepted`, `duplicate`, `refused`, `invalid_input`, ignored reasons). */
  outcomes: Record<string, number>;
  /** Inbound events these answers say were stored: one per `accepted` or `refused`, one per deferred Discord command. */
  inboundRowsClaimed: number;
}

export interface MemorySample {
  atCase: number;
  rssBytes: number;
  heapUsedBytes: number | undefined;
}

export interface FuzzSummary {
  seed: number;
  tag: string;
  sent: number;
  durationMs: number;
  byRoute: Partial<Record<FuzzRoute, RouteFigures>>;
  /** Every 5xx (up to `maxExamples`; `fiveXxCount` has them all). */
  fiveXx: FuzzExample[];
  fiveXxCount: number;
  /** Answers a class forbids other than 5xx: a 2xx without authentication, a 401 with the right credentials. */
  violations: FuzzExample[];
  violationCount: number;
  /** Requests that got no answer where one was owed (connection reset, timeout). */
  errors: { count: number; byCode: Record<string, number>; examples: FuzzExample[] };
  /** The gateway's RSS and heap from its /metrics, sampled through the run (absent if /metrics did not answer). */
  memory: MemorySample[];
  /** RSS at the end against the warm-up, with garbage and buffers in flight read out (see measureDrift in run-fuzz.ts). */
  memoryDrift: { warmupCases: number; warmupCeilingBytes: number; endFloorBytes: number; driftBytes: number } | undefined;
  /** /healthz answered after the run, and the process start time in /metrics did not change (no restart in between). */
  health: { ok: boolean; restarted: boolean; detail: string };
}
