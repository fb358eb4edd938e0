import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { DiscordStore } from './discord-store.ts';
import { op, type GatewayPayload } from './discord-types.ts';
import type { EventHub } from './event-hub.ts';

export const discordGatewayPath = '/discord-gateway';

interface BufferedEvent {
  s: number;
  t: string;
  d: unknown;
}

interface Session {
  id: string;
  seq: number;
  /** Every dispatch of the session, so a resume can replay what the client missed. */
  events: BufferedEvent[];
  socket: SocketState | undefined;
  resumeUrl: string;
  /** Set by the `drop` control action: the next resume replays from here instead of the client's seq. */
  replayFrom?: number;
}

interface SocketState {
  ws: WebSocket;
  session: Session | undefined;
  /** A half-open connection: heartbeats get no ACK and dispatches never arrive. */
  zombie: boolean;
  /** Highest sequence actually written to this socket. */
  sentSeq: number;
}

export type GatewayAction =
  | { action: 'stop-acks' }
  | { action: 'resume-acks' }
  | { action: 'reconnect' }
  | { action: 'invalid-session'; resumable?: boolean }
  | { action: 'drop'; replay_from?: number }
  | { action: 'close'; code: number }
  | { action: 'request-heartbeat' };

export interface GatewayState {
  connected: boolean;
  identifies: number;
  resumes: number;
  connections: number;
  heartbeats: number;
  acks_stopped: boolean;
  session_id: string | null;
  seq: number | null;
  pending: number;
  last_close_code: number | null;
  sessions: number;
}

export interface DispatchResult {
  session_id: string | null;
  s: number | null;
  /** Written to a live connection now; otherwise it waits for a resume (or the next identify). */
  delivered: boolean;
  queued: boolean;
}

/** Sent payloads over this many bytes close the connection with 4002 (Discord Gateway docs). */
const maxPayloadBytes = 4096;
const maxBufferedEvents = 5000;
const maxSessions = 50;

/**
 * The Discord Gateway (as Discord's Gateway docs describe it) on `ws`, reached through the
 * Fastify server's upgrade event at /discord-gateway: Hello, Identify → READY,
 * heartbeats and ACKs, Resume with replay then RESUMED, op 7 and op 9 on
 * command, and a half-open ("zombie") switch.
 */
export class DiscordGateway {
  identifies = 0;
  resumes = 0;
  connections = 0;
  heartbeats = 0;
  lastCloseCode: number | null = null;
  /** MESSAGE_CREATEs made while no session exists: the next session gets them first. */
  pending: { t: string; d: unknown }[] = [];

  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  private readonly sessions = new Map<string, Session>();
  private readonly sockets = new Set<SocketState>();
  private currentSessionId: string | undefined;

  constructor(
    private readonly store: DiscordStore,
    private readonly hub: EventHub,
  ) {}

  attach(app: FastifyInstance): void {
    const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(request.url ?? '/', 'http://sim.invalid');
      if (url.pathname !== discordGatewayPath) return;
      this.wss.handleUpgrade(request, socket, head, (ws) => this.onConnection(ws, request, url));
    };
    app.server.on('upgrade', onUpgrade);
    app.addHook('onClose', async () => {
      app.server.off('upgrade', onUpgrade);
      for (const state of this.sockets) state.ws.terminate();
      await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    });
  }

  /** Sends (or keeps for replay) one dispatch in the current session. */
  dispatch(t: string, d: unknown): DispatchResult {
    const session = this.currentSession();
    if (!session) {
      this.pending.push({ t, d });
      this.hub.publish('discord.dispatch', { t, d, queued: true });
      return { session_id: null, s: null, delivered: false, queued: true };
    }
    const event = this.buffer(session, t, d);
    const delivered = this.deliver(session, event);
    this.hub.publish('discord.dispatch', { t, s: event.s, d, delivered });
    return { session_id: session.id, s: event.s, delivered, queued: !delivered };
  }

  control(command: GatewayAction): { ok: boolean; message?: string } {
    if (command.action === 'drop' || command.action === 'close') {
      const session = this.currentSession();
      const socket = session?.socket ?? this.lastOpenSocket();
      if (!socket) return { ok: false, message: 'no connection is open' };
      if (command.action === 'drop') {
        if (session && command.replay_from !== undefined) session.replayFrom = command.replay_from;
        // No close frame: the client sees an abnormal closure (1006) and should resume.
        socket.ws.terminate();
      } else {
        if ((command.code === 4007 || command.code === 4009) && socket.session) this.invalidate(socket.session);
        socket.ws.close(command.code);
      }
      return { ok: true };
    }
    const socket = this.currentSession()?.socket;
    if (!socket) return { ok: false, message: 'no session is connected' };
    switch (command.action) {
      case 'stop-acks':
        socket.zombie = true;
        break;
      case 'resume-acks':
        socket.zombie = false;
        if (socket.session) this.flush(socket.session, socket);
        break;
      case 'reconnect':
        this.send(socket, { op: op.reconnect, d: null, s: null, t: null });
        break;
      case 'invalid-session':
        if (!command.resumable && socket.session) this.invalidate(socket.session);
        this.send(socket, { op: op.invalidSession, d: command.resumable === true, s: null, t: null });
        break;
      case 'request-heartbeat':
        this.send(socket, { op: op.heartbeat, d: null, s: null, t: null });
        break;
    }
    this.publishState(command.action);
    return { ok: true };
  }

  state(): GatewayState {
    const session = this.currentSession();
    const socket = session?.socket;
    return {
      connected: socket !== undefined && socket.ws.readyState === WebSocket.OPEN,
      identifies: this.identifies,
      resumes: this.resumes,
      connections: this.connections,
      heartbeats: this.heartbeats,
      acks_stopped: socket?.zombie ?? false,
      session_id: session?.id ?? null,
      seq: session?.seq ?? null,
      pending: this.pending.length,
      last_close_code: this.lastCloseCode,
      sessions: this.sessions.size,
    };
  }

  private onConnection(ws: WebSocket, request: IncomingMessage, url: URL): void {
    const state: SocketState = { ws, session: undefined, zombie: false, sentSeq: 0 };
    this.sockets.add(state);
    this.connections += 1;
    ws.on('error', () => undefined);
    ws.on('close', (code) => this.onClose(state, code));
    const version = url.searchParams.get('v');
    if (version !== null && version !== '10') {
      ws.close(4012, 'Invalid API version');
      return;
    }
    const host = request.headers.host ?? '127.0.0.1';
    ws.on('message', (data: RawData, isBinary: boolean) => this.onMessage(state, data, isBinary, host));
    this.send(state, { op: op.hello, d: { heartbeat_interval: this.store.heartbeatIntervalMs }, s: null, t: null });
    this.publishState('connected');
  }

  private onMessage(state: SocketState, data: RawData, isBinary: boolean, host: string): void {
    const bytes = rawLength(data);
    if (isBinary || bytes > maxPayloadBytes) return state.ws.close(4002, 'Decode error');
    let payload: { op?: unknown; d?: unknown };
    try {
      payload = JSON.parse(data.toString()) as typeof payload;
    } catch {
      return state.ws.close(4002, 'Decode error');
    }
    switch (payload.op) {
      case op.heartbeat:
        this.heartbeats += 1;
        if (!state.zombie) this.send(state, { op: op.heartbeatAck, d: null, s: null, t: null });
        this.publishState('heartbeat');
        return;
      case op.identify:
        return this.identify(state, payload.d, host);
      case op.resume:
        return this.resume(state, payload.d);
      case op.presenceUpdate:
      case op.voiceStateUpdate:
      case op.requestGuildMembers:
        if (!state.session) state.ws.close(4003, 'Not authenticated');
        return;
      default:
        state.ws.close(4001, 'Unknown opcode');
    }
  }

  private identify(state: SocketState, d: unknown, host: string): void {
    if (state.session) return state.ws.close(4005, 'Already authenticated');
    const data = (d ?? {}) as { token?: unknown; intents?: unknown };
    if (!this.tokenMatches(data.token)) return state.ws.close(4004, 'Authentication failed');
    if (typeof data.intents !== 'number' || !Number.isInteger(data.intents) || data.intents < 0) return state.ws.close(4013, 'Invalid intent(s)');
    this.identifies += 1;
    const session: Session = {
      id: randomBytes(16).toString('hex'),
      seq: 0,
      events: [],
      socket: state,
      resumeUrl: `ws://${host}${discordGatewayPath}?resume=1`,
    };
    this.sessions.set(session.id, session);
    this.trimSessions();
    this.currentSessionId = session.id;
    state.session = session;
    session.seq += 1;
    this.send(state, {
      op: op.dispatch,
      t: 'READY',
      s: session.seq,
      d: {
        v: 10,
        user: this.store.botUser,
        guilds: [],
        session_id: session.id,
        resume_gateway_url: session.resumeUrl,
        shard: [0, 1],
        application: { id: this.store.applicationId, flags: 0 },
      },
    });
    state.sentSeq = session.seq;
    this.publishState('identified');
    const waiting = this.pending;
    this.pending = [];
    for (const event of waiting) this.dispatch(event.t, event.d);
  }

  private resume(state: SocketState, d: unknown): void {
    if (state.session) return state.ws.close(4005, 'Already authenticated');
    const data = (d ?? {}) as { token?: unknown; session_id?: unknown; seq?: unknown };
    if (!this.tokenMatches(data.token)) return state.ws.close(4004, 'Authentication failed');
    const session = typeof data.session_id === 'string' ? this.sessions.get(data.session_id) : undefined;
    if (!session) {
      // An unknown or invalidated session cannot be resumed: the client must identify.
      this.send(state, { op: op.invalidSession, d: false, s: null, t: null });
      this.publishState('resume-refused');
      return;
    }
    const clientSeq = typeof data.seq === 'number' ? data.seq : 0;
    if (clientSeq > session.seq) return state.ws.close(4007, 'Invalid seq');
    if (session.socket && session.socket !== state) {
      const previous = session.socket;
      previous.session = undefined;
      previous.ws.close(4000, 'Session resumed elsewhere');
    }
    this.resumes += 1;
    session.socket = state;
    state.session = session;
    this.currentSessionId = session.id;
    const from = session.replayFrom ?? clientSeq;
    session.replayFrom = undefined;
    state.sentSeq = from;
    this.flush(session, state);
    this.send(state, { op: op.dispatch, t: 'RESUMED', s: session.seq, d: {} });
    this.publishState('resumed');
  }

  private onClose(state: SocketState, code: number): void {
    this.sockets.delete(state);
    this.lastCloseCode = code;
    const session = state.session;
    if (session && session.socket === state) {
      session.socket = undefined;
      // A client closing with 1000/1001 ends its session (Discord Gateway docs).
      if (code === 1000 || code === 1001) this.invalidate(session);
    }
    this.publishState('closed');
  }

  private buffer(session: Session, t: string, d: unknown): BufferedEvent {
    session.seq += 1;
    const event = { s: session.seq, t, d };
    session.events.push(event);
    if (session.events.length > maxBufferedEvents) session.events.splice(0, session.events.length - maxBufferedEvents);
    return event;
  }

  private deliver(session: Session, event: BufferedEvent): boolean {
    const socket = session.socket;
    if (!socket || socket.zombie || socket.ws.readyState !== WebSocket.OPEN || socket.sentSeq !== event.s - 1) {
      // Out of order would be worse than late: flush whatever the socket has not had yet.
      if (socket && !socket.zombie && socket.ws.readyState === WebSocket.OPEN) this.flush(session, socket);
      return socket !== undefined && socket.sentSeq >= event.s;
    }
    this.send(socket, { op: op.dispatch, t: event.t, s: event.s, d: event.d });
    socket.sentSeq = event.s;
    return true;
  }

  /** Writes every buffered event after the socket's sentSeq, in order. */
  private flush(session: Session, socket: SocketState): void {
    if (socket.zombie) return;
    for (const event of session.events) {
      if (event.s <= socket.sentSeq) continue;
      this.send(socket, { op: op.dispatch, t: event.t, s: event.s, d: event.d });
      socket.sentSeq = event.s;
    }
  }

  private invalidate(session: Session): void {
    this.sessions.delete(session.id);
    if (this.currentSessionId === session.id) this.currentSessionId = undefined;
  }

  private currentSession(): Session | undefined {
    return this.currentSessionId ? this.sessions.get(this.currentSessionId) : undefined;
  }

  private lastOpenSocket(): SocketState | undefined {
    let last: SocketState | undefined;
    for (const socket of this.sockets) if (socket.ws.readyState === WebSocket.OPEN) last = socket;
    return last;
  }

  private trimSessions(): void {
    for (const id of this.sessions.keys()) {
      if (this.sessions.size <= maxSessions) return;
      if (id !== this.currentSessionId) this.sessions.delete(id);
    }
  }

  private tokenMatches(token: unknown): boolean {
    if (typeof token !== 'string' || token === '') return false;
    const configured = this.store.options.botToken;
    return configured === undefined || token === configured || token === `Bot ${configured}`;
  }

  private send(state: SocketState, payload: GatewayPayload): void {
    if (state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify(payload));
  }

  private publishState(event: string): void {
    this.hub.publish('discord.gateway', { event, ...this.state() });
  }
}

function rawLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, part) => sum + part.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}
