import { WebSocket, type RawData } from 'ws';
import { defaultDiscordIntents, fatalDiscordCloseCodes, newSessionCloseCodes, opcode, resumableCloseCode } from './gateway-protocol.ts';
import type { Outcome, SocketEnd, SocketHost } from './gateway-types.ts';

type Payload = { op?: unknown; d?: unknown; s?: unknown; t?: unknown };

/**
 * Opens one WebSocket to the Gateway and resolves when it ends, with the
 * outcome that says how to connect next. The socket becomes the host's
 * `live` connection until then. Never rejects: a URL that cannot be opened
 * is an outcome too.
 */
export function openGatewaySocket(host: SocketHost, url: URL, generation: number): Promise<SocketEnd> {
  return new Promise((resolve) => {
    let socket: WebSocket;
    try {
      socket = new WebSocket(url, { handshakeTimeout: 15_000 });
    } catch (err) {
      host.log.error({ err, url: url.origin }, 'discord gateway: cannot open the Gateway URL');
      resolve({ outcome: { kind: 'resume' }, healthy: false });
      return;
    }
    const gatewaySocket = new GatewaySocket({ host, socket, generation, resolve });
    host.live = { generation, finish: (outcome, closeCode) => gatewaySocket.finish(outcome, closeCode) };
    gatewaySocket.listen();
  });
}

/**
 * One socket from open to end: Hello, then identify or resume, heartbeats
 * (a heartbeat not ACKed by the next one is a zombie connection), dispatches
 * handed to the host in order, and one `finish` that clears its timers and
 * closes it.
 */
class GatewaySocket {
  private readonly host: SocketHost;
  private readonly socket: WebSocket;
  private readonly generation: number;
  private readonly resolve: (end: SocketEnd) => void;
  private readonly timers = new Set<NodeJS.Timeout>();
  private heartbeat: NodeJS.Timeout | undefined;
  private helloTimer: NodeJS.Timeout | undefined;
  private readyTimer: NodeJS.Timeout | undefined;
  private acked = true;
  private healthy = false;
  private settled = false;

  constructor(parts: { host: SocketHost; socket: WebSocket; generation: number; resolve: (end: SocketEnd) => void }) {
    this.host = parts.host;
    this.socket = parts.socket;
    this.generation = parts.generation;
    this.resolve = parts.resolve;
  }

  listen(): void {
    const { socket, host, generation } = this;
    socket.on('error', (err) => host.log.debug({ err, generation }, 'discord gateway socket error'));
    socket.on('close', (code, reason) => this.onClose(code, reason.toString()));
    socket.on('open', () => {
      this.helloTimer = this.later(host.options.helloTimeoutMs ?? 20_000, () => {
        host.log.warn({ generation }, 'discord gateway: no Hello');
        this.finish({ kind: 'resume' });
      });
    });
    socket.on('message', (data: RawData) => this.onMessage(data));
  }

  finish(outcome: Outcome, closeCode = resumableCloseCode): void {
    if (this.settled) return;
    this.settled = true;
    const { socket } = this;
    for (const timer of this.timers) clearTimeout(timer);
    clearInterval(this.heartbeat);
    socket.removeAllListeners('message');
    if (this.host.live?.generation === this.generation) this.host.live = undefined;
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
    this.resolve({ outcome, healthy: this.healthy });
  }

  private later(ms: number, fn: () => void): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
    return timer;
  }

  private send(payload: unknown): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(payload));
  }

  private beat(): void {
    if (!this.acked) {
      this.host.log.warn({ generation: this.generation }, 'discord gateway: no heartbeat ACK since the last heartbeat (zombie connection); reconnecting to resume');
      this.finish({ kind: 'resume' });
      return;
    }
    this.acked = false;
    this.send({ op: opcode.Heartbeat, d: this.host.receivedSeq });
  }

  private onClose(code: number, reason: string): void {
    if (this.settled) return;
    const fatal = fatalDiscordCloseCodes.get(code);
    if (fatal) return this.finish({ kind: 'fatal', code, reason: fatal });
    this.host.log.info({ code, reason, generation: this.generation }, 'discord gateway connection closed');
    this.finish(newSessionCloseCodes.has(code) ? { kind: 'identify' } : { kind: 'resume' });
  }

  private onMessage(data: RawData): void {
    const { host, generation } = this;
    let payload: Payload;
    try {
      payload = JSON.parse(data.toString()) as Payload;
    } catch {
      host.log.warn({ generation }, 'discord gateway: undecodable payload ignored');
      return;
    }
    switch (payload.op) {
      case opcode.Hello:
        return this.onHello(payload.d);
      case opcode.HeartbeatAck:
        this.acked = true;
        return;
      case opcode.Heartbeat:
        // The server asks for a beat now; it does not change what the ACK check waits for.
        return this.send({ op: opcode.Heartbeat, d: host.receivedSeq });
      case opcode.Reconnect:
        host.log.info({ generation }, 'discord gateway: asked to reconnect (op 7); resuming');
        return this.finish({ kind: 'resume' });
      case opcode.InvalidSession:
        return this.onInvalidSession(payload.d);
      case opcode.Dispatch:
        return this.onDispatch(payload);
      default:
        return;
    }
  }

  private onHello(data: unknown): void {
    clearTimeout(this.helloTimer);
    const interval = (data as { heartbeat_interval?: unknown } | null)?.heartbeat_interval;
    if (typeof interval !== 'number' || !(interval > 0)) return this.finish({ kind: 'resume' });
    // The first beat after interval × random(0..1) spreads reconnecting clients (Discord Gateway docs).
    this.later(Math.floor(interval * Math.random()), () => {
      this.beat();
      if (!this.settled) this.heartbeat = setInterval(() => this.beat(), interval);
    });
    this.identifyOrResume();
    this.readyTimer = this.later(this.host.options.readyTimeoutMs ?? 20_000, () => {
      this.host.log.warn({ generation: this.generation }, 'discord gateway: no READY or RESUMED in time');
      this.finish({ kind: 'resume' });
    });
  }

  private identifyOrResume(): void {
    const { host } = this;
    const { token } = host.options;
    if (host.session) {
      host.status = 'resuming';
      this.send({ op: opcode.Resume, d: { token, session_id: host.session.sessionId, seq: host.session.seq } });
      return;
    }
    host.status = 'connecting';
    const properties = { os: process.platform, browser: 'switchboard', device: 'switchboard' };
    this.send({ op: opcode.Identify, d: { token, intents: host.options.intents ?? defaultDiscordIntents, properties } });
  }

  private onInvalidSession(data: unknown): void {
    const resumable = data === true && this.host.session !== undefined;
    this.host.log.info({ generation: this.generation, resumable }, 'discord gateway: invalid session (op 9)');
    if (resumable) return this.finish({ kind: 'resume' });
    const { min, max } = this.host.options.invalidSessionDelayMs ?? { min: 1000, max: 5000 };
    this.finish({ kind: 'identify', delayMs: Math.round(min + Math.random() * Math.max(0, max - min)) });
  }

  private onDispatch(payload: Payload): void {
    const { host } = this;
    if (typeof payload.t !== 'string') return;
    const seq = typeof payload.s === 'number' ? payload.s : null;
    if (payload.t === 'READY') {
      clearTimeout(this.readyTimer);
      this.healthy = true;
      host.acceptReady(payload.d, seq);
      return;
    }
    if (seq !== null && (host.receivedSeq === null || seq > host.receivedSeq)) host.receivedSeq = seq;
    if (payload.t === 'RESUMED') {
      clearTimeout(this.readyTimer);
      this.healthy = true;
      host.status = 'ready';
      host.log.info({ generation: this.generation, seq: host.session?.seq }, 'discord gateway resumed');
      return;
    }
    if (seq === null) return;
    host.enqueueDispatch({ t: payload.t, s: seq, d: payload.d }, this.generation);
  }
}
