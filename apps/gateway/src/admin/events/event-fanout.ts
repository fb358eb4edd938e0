import type { WebSocket } from 'ws';
import type { Logger } from '@switchboard/logger';
import { eventsChannel, onChannelMessage, subscribeTo, unsubscribeFrom, type RedisClient } from '@switchboard/queue';
import type { GatewayMetrics } from '../../metrics/gateway-metrics.ts';

/** Close codes the stream uses (documented in docs/admin.md). */
export const EventStreamClose = {
  /** The client read too slowly: its send buffer passed the limit. */
  SlowClient: 4008,
  /** This gateway already serves its maximum of stream clients. */
  TooManyClients: 4029,
  /** The lifecycle channel is not available (Redis unreachable at connect). */
  Unavailable: 1011,
  /** The gateway is shutting down. */
  GoingAway: 1001,
} as const;

export interface EventFanoutOptions {
  subscriber: RedisClient;
  prefix: string;
  log: Logger;
  metrics: GatewayMetrics;
  /** A client whose unsent data passes this many bytes is dropped. */
  maxBufferedBytes: number;
  maxClients: number;
  /** Pings every this many ms; a client that has not answered the previous ping is dropped. */
  pingIntervalMs: number;
  /** After asking a dropped client to close, this long until its socket is destroyed regardless. */
  closeGraceMs: number;
}

interface Client {
  socket: WebSocket;
  conversationId: number | undefined;
  alive: boolean;
}

export interface EventFanout {
  /**
   * Adds a client once the Redis subscription is live (taken with the first
   * client): 'full' if the gateway serves its maximum (4029), 'unavailable'
   * if the subscription failed or took longer than `readyTimeoutMs` (1011);
   * the socket is closed in both cases.
   */
  add(socket: WebSocket, conversationId: number | undefined, readyTimeoutMs: number): Promise<'added' | 'full' | 'unavailable'>;
  readonly clientCount: number;
  close(): Promise<void>;
}

/**
 * One Redis subscription per gateway process, fanned out to every admin
 * WebSocket, and held only while at least one is connected: every turn
 * publishes its lifecycle events, and a gateway subscribed with nobody
 * listening would be woken to parse each of them on the hot path for
 * nothing. Each event goes out in the order Redis delivered it. Nothing is
 * queued per client beyond the socket's own send buffer, and a client whose
 * buffer passes the limit is closed (4008): a slow reader costs at most
 * `maxBufferedBytes`, never unbounded memory.
 */
export function createEventFanout(options: EventFanoutOptions): EventFanout {
  const state: FanoutState = { options, clients: new Set(), waiting: 0, channel: eventsChannel(options.prefix), subscription: undefined };
  onChannelMessage(options.subscriber, state.channel, (raw) => sendEvent(state, raw));
  const pinger = setInterval(() => pingClients(state), options.pingIntervalMs);
  pinger.unref();
  return {
    add: (socket, conversationId, readyTimeoutMs) => addClient(state, { socket, conversationId, readyTimeoutMs }),
    get clientCount() {
      return state.clients.size;
    },
    async close() {
      clearInterval(pinger);
      closeClients(state);
    },
  };
}

/** What the fanout's steps share: the connected clients and the subscription they keep wanted. */
interface FanoutState {
  readonly options: EventFanoutOptions;
  readonly clients: Set<Client>;
  /** Sockets waiting for the subscription: they keep it wanted, but get no events before `stream.opened`. */
  waiting: number;
  readonly channel: string;
  subscription: Promise<void> | undefined;
}

const dropReasons = {
  slow: { code: EventStreamClose.SlowClient, text: 'client too slow' },
  unresponsive: { code: EventStreamClose.GoingAway, text: 'no pong' },
} as const;

function subscribe(state: FanoutState): Promise<void> {
  state.subscription ??= subscribeTo(state.options.subscriber, state.channel).then(
    () => undefined,
    (err: unknown) => {
      state.subscription = undefined; // the next client tries again
      state.options.log.error({ err }, 'admin event stream could not subscribe');
      throw err;
    },
  );
  return state.subscription;
}

function unsubscribeIfUnwanted(state: FanoutState): void {
  if (state.clients.size > 0 || state.waiting > 0 || !state.subscription) return;
  state.subscription = undefined;
  // ioredis sends commands in order, so a later SUBSCRIBE goes out after this.
  unsubscribeFrom(state.options.subscriber, state.channel).catch((err: unknown) => state.options.log.warn({ err }, 'admin event stream could not unsubscribe'));
}

function removeClient(state: FanoutState, client: Client): void {
  if (!state.clients.delete(client)) return;
  state.options.metrics.setEventClients(state.clients.size);
  unsubscribeIfUnwanted(state);
}

function dropClient(state: FanoutState, client: Client, reason: keyof typeof dropReasons): void {
  removeClient(state, client);
  state.options.metrics.countEventClientDropped(reason);
  state.options.log.warn({ reason, bufferedBytes: client.socket.bufferedAmount }, 'admin event client dropped');
  client.socket.close(dropReasons[reason].code, dropReasons[reason].text);
  // The close frame waits behind the unread data; do not wait for it forever.
  setTimeout(() => client.socket.terminate(), state.options.closeGraceMs).unref();
}

/** One lifecycle event, in the order Redis delivered it, to every open client that follows its conversation (or all). */
function sendEvent(state: FanoutState, raw: string): void {
  let conversationId: unknown;
  try {
    conversationId = (JSON.parse(raw) as { conversationId?: unknown }).conversationId;
  } catch {
    state.options.log.warn('ignored a malformed lifecycle event');
    return;
  }
  for (const client of state.clients) {
    if (client.conversationId !== undefined && client.conversationId !== conversationId) continue;
    if (client.socket.readyState !== client.socket.OPEN) continue;
    if (client.socket.bufferedAmount > state.options.maxBufferedBytes) {
      dropClient(state, client, 'slow');
      continue;
    }
    client.socket.send(raw);
  }
}

function pingClients(state: FanoutState): void {
  for (const client of state.clients) {
    if (!client.alive) {
      dropClient(state, client, 'unresponsive');
      continue;
    }
    client.alive = false;
    client.socket.ping();
  }
}

interface AddRequest {
  socket: WebSocket;
  conversationId: number | undefined;
  readyTimeoutMs: number;
}

async function addClient(state: FanoutState, { socket, conversationId, readyTimeoutMs }: AddRequest): Promise<'added' | 'full' | 'unavailable'> {
  if (state.clients.size + state.waiting >= state.options.maxClients) {
    state.options.metrics.countEventClientDropped('full');
    socket.close(EventStreamClose.TooManyClients, 'too many stream clients');
    return 'full';
  }
  const live = await awaitSubscription(state, readyTimeoutMs);
  if (!live || socket.readyState !== socket.OPEN) {
    unsubscribeIfUnwanted(state);
    if (!live) socket.close(EventStreamClose.Unavailable, 'event stream unavailable');
    return 'unavailable';
  }
  const client: Client = { socket, conversationId, alive: true };
  state.clients.add(client);
  state.options.metrics.setEventClients(state.clients.size);
  socket.on('pong', () => (client.alive = true));
  socket.on('close', () => removeClient(state, client));
  return 'added';
}

/** Waits (counted as waiting, so the subscription stays wanted) until the subscription is live: false on failure or timeout. */
async function awaitSubscription(state: FanoutState, readyTimeoutMs: number): Promise<boolean> {
  state.waiting++;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([subscribe(state), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), readyTimeoutMs)))]);
    return true;
  } catch {
    // Failure is logged by subscribe(). After a timeout the subscription still under way is kept only if another client wants it (in addClient).
    return false;
  } finally {
    clearTimeout(timer);
    state.waiting--;
  }
}

function closeClients(state: FanoutState): void {
  for (const client of state.clients) client.socket.close(EventStreamClose.GoingAway, 'gateway shutting down');
  state.clients.clear();
  state.options.metrics.setEventClients(0);
  state.options.subscriber.disconnect();
}
