import { setTimeout as sleep } from 'node:timers/promises';
import type { GatewayIntentBits, GatewayOpcodes } from 'discord-api-types/v10';
import { WebSocket, type RawData } from 'ws';
import type { Logger } from '@switchboard/logger';
import { loadOnFirstUse } from '../load-on-first-use.ts';

/*
 * The inbound Discord Gateway, written on `ws` rather than @discordjs/ws
 * (2.0.4), because that manager, read at this version, falls short of what
 * ingress needs (no lost or duplicated events, no tight reconnect loop) in ways its options cannot change:
 * - after any failed connection it reconnects after a fixed 500 ms, forever:
 *   no backoff, so an outage or a network partition becomes a tight loop;
 * - a zombie connection is closed with a close handshake, and on a dead TCP
 *   path `ws` waits 30 s for the peer's close frame before the resume starts;
 * - a fatal close (4004, 4010–4014) surfaces as a bare Error("Used disallowed
 *   intents") with no way to say which setting to fix;
 * - its identify throttle waits up to 6.5 s before any re-identify, and its
 *   sequence number advances when an event arrives, not when it was stored,
 *   so a resume after a failed store would skip the unstored events.
 * What is kept from the SDKs: @discordjs/rest for GET /gateway/bot
 * (gateway-bot.ts, loaded on the first connect) and discord-api-types'
 * declarations of opcodes and intents. Their values are written out here,
 * checked against those declarations by `satisfies`: importing
 * discord-api-types' values loads all of it (about 15 MiB of RSS).
 */

const opcode = { Dispatch: 0, Heartbeat: 1, Identify: 2, Resume: 6, Reconnect: 7, InvalidSession: 9, Hello: 10, HeartbeatAck: 11 } as const satisfies Pick<
  typeof GatewayOpcodes,
  'Dispatch' | 'Heartbeat' | 'Identify' | 'Resume' | 'Reconnect' | 'InvalidSession' | 'Hello' | 'HeartbeatAck'
>;
const intent = { GuildMessages: 512, DirectMessages: 4096, MessageContent: 32768 } as const satisfies Pick<typeof GatewayIntentBits, 'GuildMessages' | 'DirectMessages' | 'MessageContent'>;

export const defaultDiscordIntents = intent.GuildMessages | intent.DirectMessages | intent.MessageContent;

/** Close codes after which reconnecting cannot help (Discord Gateway docs), with what the operator must fix. */
export const fatalDiscordCloseCodes: ReadonlyMap<number, string> = new Map([
  [4004, 'authentication failed: DISCORD_BOT_TOKEN is wrong or was reset; copy the token again from the Developer Portal (Bot → Reset Token)'],
  [4010, 'invalid shard: the gateway refused shard [0, 1]; Switchboard runs one unsharded connection per bot'],
  [4011, 'sharding required: the bot is in too many guilds for one connection, which Switchboard does not shard'],
  [4012, 'invalid API version: the gateway refused v10; update Switchboard'],
  [4013, 'invalid intents: the intents sent on identify are not a valid bitfield'],
  [4014, 'disallowed intents: enable the MESSAGE_CONTENT privileged intent in the Developer Portal (Bot → Privileged Gateway Intents)'],
]);

/** Close codes after which the session cannot be resumed: identify anew. */
const newSessionCloseCodes = new Set([4007, 4009]);
/** About how long Discord keeps a dropped session resumable; past it, resuming only earns an op 9. */
const resumeGiveUpMs = 120_000;
/** Our own close code: anything but 1000/1001 keeps the session resumable (1000 would invalidate it). */
const resumableCloseCode = 4000;

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

type Outcome =
  /** `failed`: the connection worked but an event could not be handled; counts towards the backoff. */
  | { kind: 'resume'; delayMs?: number; failed?: boolean }
  | { kind: 'identify'; delayMs?: number }
  | { kind: 'fatal'; code: number; reason: string }
  | { kind: 'stopped' };

interface LiveConnection {
  generation: number;
  finish(outcome: Outcome, closeCode?: number): void;
}

export function createDiscordGatewayConnection(options: DiscordGatewayOptions): DiscordGatewayConnection {
  return new GatewayConnection(options);
}

class GatewayConnection implements DiscordGatewayConnection {
  status: DiscordGatewayStatus = 'idle';
  session: DiscordGatewaySession | undefined;

  private readonly options: DiscordGatewayOptions;
  private readonly log: DiscordGatewayOptions['log'];
  private readonly gatewayBot = loadOnFirstUse(async () => (await import('./gateway-bot.ts')).createGatewayBotReader({ apiUrl: this.options.apiUrl, token: this.options.token }));
  private readonly stop = new AbortController();
  private loop: Promise<void> | undefined;
  private live: LiveConnection | undefined;
  private generation = 0;
  /** Dispatches of this generation and older are dropped unhandled: a resume will replay them. */
  private poisonedGeneration = -1;
  private receivedSeq: number | null = null;
  private failures = 0;
  private unhealthySince: number | undefined;
  private dispatchChain: Promise<void> = Promise.resolve();
  private saving: Promise<void> | undefined;
  private saveAgain = false;

  constructor(options: DiscordGatewayOptions) {
    this.options = options;
    this.log = options.log;
  }

  start(): void {
    this.loop ??= this.run().catch((err: unknown) => {
      this.status = 'fatal';
      this.log.error({ err }, 'discord gateway loop crashed; inbound Discord messages stop until restart');
    });
  }

  async close(): Promise<void> {
    if (this.status === 'closed') return;
    this.stop.abort();
    this.live?.finish({ kind: 'stopped' }, this.options.sessionStore ? resumableCloseCode : 1000);
    await this.loop;
    // Let the event being stored finish; a stuck store must not hold shutdown forever.
    await Promise.race([this.dispatchChain, sleep(5000, undefined, { ref: false })]);
    await this.saving;
    this.status = 'closed';
  }

  private async run(): Promise<void> {
    if (this.options.sessionStore) {
      try {
        this.session = await this.options.sessionStore.load();
        if (this.session) this.log.info({ sessionId: this.session.sessionId, seq: this.session.seq }, 'discord gateway: resuming the stored session');
      } catch (err) {
        this.log.warn({ err }, 'discord gateway: stored session unreadable; identifying anew');
      }
    }
    while (!this.stop.signal.aborted) {
      const { outcome, healthy } = await this.connectOnce();
      if (outcome.kind === 'stopped' || this.stop.signal.aborted) break;
      if (outcome.kind === 'fatal') {
        this.status = 'fatal';
        this.log.error({ code: outcome.code }, `discord gateway stopped by ${outcome.code}, ${outcome.reason}; not reconnecting`);
        this.options.onFatal?.({ code: outcome.code, reason: outcome.reason });
        return;
      }
      if (outcome.kind === 'identify') this.forgetSession();
      const failed = outcome.kind === 'resume' && outcome.failed === true;
      this.failures = healthy && !failed ? 0 : this.failures + 1;
      // Resuming that keeps failing to connect for longer than Discord keeps
      // a session resumable is given up for a fresh identify.
      if (healthy) this.unhealthySince = undefined;
      else this.unhealthySince ??= Date.now();
      if (this.session && this.unhealthySince !== undefined && Date.now() - this.unhealthySince > resumeGiveUpMs) {
        this.log.warn({ sinceMs: Date.now() - this.unhealthySince }, 'discord gateway: resuming keeps failing; identifying anew');
        this.forgetSession();
      }
      const delayMs = outcome.delayMs ?? this.reconnectDelay();
      this.status = 'waiting';
      this.log.debug({ delayMs, failures: this.failures, next: this.session ? 'resume' : 'identify' }, 'discord gateway: reconnecting');
      await sleep(delayMs, undefined, { signal: this.stop.signal }).catch(() => undefined);
    }
  }

  private reconnectDelay(): number {
    // After a healthy connection (op 7, a zombie) reconnect at once, spread a little.
    if (this.failures === 0) return Math.floor(Math.random() * 250);
    const initial = this.options.reconnect?.initialDelayMs ?? 1000;
    const max = this.options.reconnect?.maxDelayMs ?? 60_000;
    const base = Math.min(max, initial * 2 ** (this.failures - 1));
    return Math.round(base / 2 + (Math.random() * base) / 2);
  }

  private async connectOnce(): Promise<{ outcome: Outcome; healthy: boolean }> {
    let url: string | undefined;
    try {
      url = this.session?.resumeUrl ?? (await this.resolveGatewayUrl());
    } catch (error) {
      if (this.stop.signal.aborted) return { outcome: { kind: 'stopped' }, healthy: false };
      this.log.warn({ err: error }, 'discord gateway: GET /gateway/bot failed');
      return { outcome: { kind: 'resume' }, healthy: false };
    }
    if (this.stop.signal.aborted) return { outcome: { kind: 'stopped' }, healthy: false };
    if (url === undefined) return { outcome: { kind: 'fatal', code: 4004, reason: fatalDiscordCloseCodes.get(4004) as string }, healthy: false };
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      this.log.error({ url }, 'discord gateway: the Gateway URL is not a URL; identifying anew');
      return { outcome: { kind: 'identify' }, healthy: false };
    }
    target.searchParams.set('v', '10');
    target.searchParams.set('encoding', 'json');
    const generation = ++this.generation;
    this.status = this.session ? 'resuming' : 'connecting';
    return new Promise((resolve) => this.openSocket(target, generation, resolve));
  }

  /** undefined: Discord refused the token. */
  private async resolveGatewayUrl(): Promise<string | undefined> {
    if (this.options.gatewayUrl) return this.options.gatewayUrl;
    const answer = await (await this.gatewayBot()).read(this.stop.signal);
    if (answer.kind === 'unauthorized') return undefined;
    const info = answer.info;
    const limit = info.session_start_limit;
    if (limit && limit.remaining <= 0) {
      // 1,000 identifies per 24 h; spending the last one early would only get the token reset.
      this.log.warn({ resetAfterMs: limit.reset_after }, 'discord gateway: no identifies left today; waiting for the limit to reset');
      await sleep(limit.reset_after, undefined, { signal: this.stop.signal });
    }
    return info.url;
  }

  private openSocket(url: URL, generation: number, resolve: (result: { outcome: Outcome; healthy: boolean }) => void): void {
    let socket: WebSocket;
    try {
      socket = new WebSocket(url, { handshakeTimeout: 15_000 });
    } catch (err) {
      this.log.error({ err, url: url.origin }, 'discord gateway: cannot open the Gateway URL');
      resolve({ outcome: { kind: 'resume' }, healthy: false });
      return;
    }
    const timers = new Set<NodeJS.Timeout>();
    const later = (ms: number, fn: () => void) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        fn();
      }, ms);
      timers.add(timer);
      return timer;
    };
    let heartbeat: NodeJS.Timeout | undefined;
    let helloTimer: NodeJS.Timeout | undefined;
    let readyTimer: NodeJS.Timeout | undefined;
    let acked = true;
    let healthy = false;
    let settled = false;

    const finish = (outcome: Outcome, closeCode = resumableCloseCode) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      clearInterval(heartbeat);
      socket.removeAllListeners('message');
      if (this.live?.generation === generation) this.live = undefined;
      if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) {
        // A zombie's peer never answers the close frame; do not wait ws's 30 s for it.
        const kill = setTimeout(() => socket.terminate(), 1000);
        kill.unref();
        socket.once('close', () => clearTimeout(kill));
        try {
          socket.close(closeCode);
        } catch {
          socket.terminate();
        }
      }
      resolve({ outcome, healthy });
    };
    this.live = { generation, finish };

    const send = (payload: unknown) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(payload));
    };
    const beat = () => {
      if (!acked) {
        this.log.warn({ generation }, 'discord gateway: no heartbeat ACK since the last heartbeat (zombie connection); reconnecting to resume');
        finish({ kind: 'resume' });
        return;
      }
      acked = false;
      send({ op: opcode.Heartbeat, d: this.receivedSeq });
    };

    socket.on('error', (err) => this.log.debug({ err, generation }, 'discord gateway socket error'));
    socket.on('close', (code, reason) => {
      if (settled) return;
      const fatal = fatalDiscordCloseCodes.get(code);
      if (fatal) return finish({ kind: 'fatal', code, reason: fatal });
      this.log.info({ code, reason: reason.toString(), generation }, 'discord gateway connection closed');
      finish(newSessionCloseCodes.has(code) ? { kind: 'identify' } : { kind: 'resume' });
    });
    socket.on('open', () => {
      helloTimer = later(this.options.helloTimeoutMs ?? 20_000, () => {
        this.log.warn({ generation }, 'discord gateway: no Hello');
        finish({ kind: 'resume' });
      });
    });
    socket.on('message', (data: RawData) => {
      let payload: { op?: unknown; d?: unknown; s?: unknown; t?: unknown };
      try {
        payload = JSON.parse(data.toString()) as typeof payload;
      } catch {
        this.log.warn({ generation }, 'discord gateway: undecodable payload ignored');
        return;
      }
      switch (payload.op) {
        case opcode.Hello: {
          clearTimeout(helloTimer);
          const interval = (payload.d as { heartbeat_interval?: unknown } | null)?.heartbeat_interval;
          if (typeof interval !== 'number' || !(interval > 0)) return finish({ kind: 'resume' });
          // The first beat after interval × random(0..1) spreads reconnecting clients (Discord Gateway docs).
          later(Math.floor(interval * Math.random()), () => {
            beat();
            if (!settled) heartbeat = setInterval(beat, interval);
          });
          if (this.session) {
            this.status = 'resuming';
            send({ op: opcode.Resume, d: { token: this.options.token, session_id: this.session.sessionId, seq: this.session.seq } });
          } else {
            this.status = 'connecting';
            send({
              op: opcode.Identify,
              d: {
                token: this.options.token,
                intents: this.options.intents ?? defaultDiscordIntents,
                properties: { os: process.platform, browser: 'switchboard', device: 'switchboard' },
              },
            });
          }
          readyTimer = later(this.options.readyTimeoutMs ?? 20_000, () => {
            this.log.warn({ generation }, 'discord gateway: no READY or RESUMED in time');
            finish({ kind: 'resume' });
          });
          return;
        }
        case opcode.HeartbeatAck:
          acked = true;
          return;
        case opcode.Heartbeat:
          // The server asks for a beat now; it does not change what the ACK check waits for.
          send({ op: opcode.Heartbeat, d: this.receivedSeq });
          return;
        case opcode.Reconnect:
          this.log.info({ generation }, 'discord gateway: asked to reconnect (op 7); resuming');
          return finish({ kind: 'resume' });
        case opcode.InvalidSession: {
          const resumable = payload.d === true && this.session !== undefined;
          this.log.info({ generation, resumable }, 'discord gateway: invalid session (op 9)');
          if (resumable) return finish({ kind: 'resume' });
          const { min, max } = this.options.invalidSessionDelayMs ?? { min: 1000, max: 5000 };
          return finish({ kind: 'identify', delayMs: Math.round(min + Math.random() * Math.max(0, max - min)) });
        }
        case opcode.Dispatch: {
          if (typeof payload.t !== 'string') return;
          const seq = typeof payload.s === 'number' ? payload.s : null;
          if (payload.t === 'READY') {
            clearTimeout(readyTimer);
            healthy = true;
            this.onReady(payload.d, seq);
            return;
          }
          if (seq !== null && (this.receivedSeq === null || seq > this.receivedSeq)) this.receivedSeq = seq;
          if (payload.t === 'RESUMED') {
            clearTimeout(readyTimer);
            healthy = true;
            this.status = 'ready';
            this.log.info({ generation, seq: this.session?.seq }, 'discord gateway resumed');
            return;
          }
          if (seq === null) return;
          this.enqueueDispatch({ t: payload.t, s: seq, d: payload.d }, generation);
          return;
        }
        default:
          return;
      }
    });
  }

  private onReady(data: unknown, seq: number | null): void {
    const d = data as { session_id?: unknown; resume_gateway_url?: unknown; user?: { id?: unknown; username?: unknown }; application?: { id?: unknown } };
    if (typeof d?.session_id !== 'string' || typeof d.resume_gateway_url !== 'string' || typeof d.user?.id !== 'string') {
      this.log.error('discord gateway: READY without session_id, resume_gateway_url or user; reconnecting');
      this.live?.finish({ kind: 'identify' });
      return;
    }
    this.session = { sessionId: d.session_id, resumeUrl: d.resume_gateway_url, seq };
    this.receivedSeq = seq;
    this.status = 'ready';
    this.persistSession();
    const ready: DiscordReady = {
      userId: d.user.id,
      username: typeof d.user.username === 'string' ? d.user.username : undefined,
      applicationId: typeof d.application?.id === 'string' ? d.application.id : undefined,
      sessionId: d.session_id,
    };
    this.log.info({ userId: ready.userId, sessionId: ready.sessionId }, 'discord gateway ready');
    this.options.onReady?.(ready);
  }

  // One at a time and in order: a conversation's messages must be stored in the order they were sent.
  private enqueueDispatch(event: DiscordDispatch, generation: number): void {
    const sessionId = this.session?.sessionId;
    this.dispatchChain = this.dispatchChain.then(async () => {
      if (generation <= this.poisonedGeneration) return;
      try {
        await this.options.onDispatch(event);
      } catch (err) {
        this.poisonedGeneration = Math.max(this.poisonedGeneration, generation);
        this.log.error({ err, t: event.t, s: event.s }, 'discord gateway: event not handled; resuming so Discord replays it');
        if (this.live?.generation === generation) this.live.finish({ kind: 'resume', failed: true });
        return;
      }
      if (this.session && this.session.sessionId === sessionId && (this.session.seq === null || event.s > this.session.seq)) {
        this.session.seq = event.s;
        this.persistSession();
      }
    });
  }

  private forgetSession(): void {
    this.session = undefined;
    this.receivedSeq = null;
    this.persistSession();
  }

  // Latest wins: at most one save in flight, and one more with whatever is newest when it ends.
  private persistSession(): void {
    const store = this.options.sessionStore;
    if (!store) return;
    if (this.saving) {
      this.saveAgain = true;
      return;
    }
    this.saving = (async () => {
      do {
        this.saveAgain = false;
        const snapshot = this.session ? { ...this.session } : undefined;
        try {
          await store.save(snapshot);
        } catch (err) {
          this.log.debug({ err }, 'discord gateway: session not saved');
        }
      } while (this.saveAgain);
      this.saving = undefined;
    })();
  }
}
