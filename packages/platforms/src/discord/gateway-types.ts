import type { Logger } from '@switchboard/logger';

export interface DiscordGatewaySession {
  sessionId: string;
  resumeUrl: string;
  /** The last sequence number whose event was handled (stored), so a resume replays everything after it. */
  seq: number | null;
}

/** Where the session lives between processes, so a process that takes over can resume instead of losing events. */
export interface DiscordSessionStore {
  load(): Promise<DiscordGatewaySession | undefined>;
  save(session: DiscordGatewaySession | undefined): Promise<void>;
}

export interface DiscordReady {
  userId: string;
  username: string | undefined;
  applicationId: string | undefined;
  sessionId: string;
}

export interface DiscordDispatch {
  t: string;
  s: number;
  d: unknown;
}

export type DiscordGatewayStatus = 'idle' | 'connecting' | 'resuming' | 'ready' | 'waiting' | 'fatal' | 'closed';

export interface DiscordGatewayOptions {
  token: string;
  /** REST base for GET /gateway/bot, e.g. https://discord.com/api. */
  apiUrl: string;
  /** Skips GET /gateway/bot and connects here (DISCORD_GATEWAY_URL). */
  gatewayUrl?: string;
  intents?: number;
  log: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  /**
   * Called for every dispatch but READY and RESUMED, one at a time, in
   * sequence order. Resolving means "handled": only then does the sequence a
   * resume starts from move past the event. Throwing closes the connection and
   * resumes from the last handled event, so Discord replays the rest.
   */
  onDispatch(event: DiscordDispatch): Promise<void> | void;
  onReady?(ready: DiscordReady): void;
  onFatal?(failure: { code: number; reason: string }): void;
  sessionStore?: DiscordSessionStore;
  /** Backoff after failed connections: doubling from initialDelayMs up to maxDelayMs, with jitter. */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  /** Wait before identifying again after op 9 d:false (Discord asks for 1–5 s). */
  invalidSessionDelayMs?: { min: number; max: number };
  helloTimeoutMs?: number;
  readyTimeoutMs?: number;
}

export interface DiscordGatewayConnection {
  /** Starts connecting in the background; never rejects. */
  start(): void;
  /** Stops for good: closes the socket (keeping the session resumable when a session store is given) and waits for in-flight handling. */
  close(): Promise<void>;
  readonly status: DiscordGatewayStatus;
  /** The current session, for diagnostics. */
  readonly session: DiscordGatewaySession | undefined;
}

/** How one socket ended, and so how to connect next. */
export type Outcome =
  /** `failed`: the connection worked but an event could not be handled; counts towards the backoff. */
  | { kind: 'resume'; delayMs?: number; failed?: boolean }
  | { kind: 'identify'; delayMs?: number }
  | { kind: 'fatal'; code: number; reason: string }
  | { kind: 'stopped' };

/** One socket's end: `healthy` once it got READY or RESUMED. */
export interface SocketEnd {
  outcome: Outcome;
  healthy: boolean;
}

/** The socket open now, which the connection can end (close, a failed event, a bad READY). */
export interface LiveConnection {
  generation: number;
  finish(outcome: Outcome, closeCode?: number): void;
}

/** What one socket sees of the connection that opened it. */
export interface SocketHost {
  readonly options: DiscordGatewayOptions;
  readonly log: DiscordGatewayOptions['log'];
  readonly session: DiscordGatewaySession | undefined;
  status: DiscordGatewayStatus;
  /** The highest sequence received on any socket of this session, sent with each heartbeat. */
  receivedSeq: number | null;
  live: LiveConnection | undefined;
  /** READY: the new session (or a `finish` to identify again when READY lacks it). */
  acceptReady(data: unknown, seq: number | null): void;
  /** Any other dispatch with a sequence, handed on in order. */
  enqueueDispatch(event: DiscordDispatch, generation: number): void;
}
