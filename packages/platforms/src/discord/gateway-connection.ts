import { setTimeout as sleep } from 'node:timers/promises';
import { loadOnFirstUse } from '../load-on-first-use.ts';
import { fatalDiscordCloseCodes, resumableCloseCode } from './gateway-protocol.ts';
import { openGatewaySocket } from './gateway-socket.ts';
import type { DiscordDispatch, DiscordGatewayConnection, DiscordGatewayOptions, DiscordGatewaySession, DiscordGatewayStatus, DiscordReady, LiveConnection, SocketEnd, SocketHost } from './gateway-types.ts';

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
 * declarations of opcodes and intents (gateway-protocol.ts writes their
 * values out). This file is the connection across sockets (session, backoff,
 * handing events on in order, saving the resume point); gateway-socket.ts is
 * one socket's life (Hello, identify or resume, heartbeats, dispatches).
 */

/** About how long Discord keeps a dropped session resumable; past it, resuming only earns an op 9. */
const resumeGiveUpMs = 120_000;

export function createDiscordGatewayConnection(options: DiscordGatewayOptions): DiscordGatewayConnection {
  return new GatewayConnection(options);
}

class GatewayConnection implements DiscordGatewayConnection, SocketHost {
  status: DiscordGatewayStatus = 'idle';
  session: DiscordGatewaySession | undefined;

  readonly options: DiscordGatewayOptions;
  readonly log: DiscordGatewayOptions['log'];
  live: LiveConnection | undefined;
  receivedSeq: number | null = null;
  private readonly gatewayBot = loadOnFirstUse(async () => (await import('./gateway-bot.ts')).createGatewayBotReader({ apiUrl: this.options.apiUrl, token: this.options.token }));
  private readonly stop = new AbortController();
  private loop: Promise<void> | undefined;
  private generation = 0;
  /** Dispatches of this generation and older are dropped unhandled: a resume will replay them. */
  private poisonedGeneration = -1;
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

  private async connectOnce(): Promise<SocketEnd> {
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
    return openGatewaySocket(this, target, generation);
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

  acceptReady(data: unknown, seq: number | null): void {
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
  enqueueDispatch(event: DiscordDispatch, generation: number): void {
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
