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
  const clients = new Set<Client>();
  /** Sockets waiting for the subscription: they keep it wanted, but get no events before `stream.opened`. */
  let waiting = 0;
  const channel = eventsChannel(options.prefix);
  let subscription: Promise<void> | undefined;

  const subscribe = (): Promise<void> => {
    subscription ??= subscribeTo(options.subscriber, channel).then(
      () => undefined,
      (err: unknown) => {
        subscription = undefined; // the next client tries again
        options.log.error({ err }, 'admin event stream could not subscribe');
        throw err;
      },
    );
    return subscription;
  };
  const unsubscribeIfUnwanted = () => {
    if (clients.size > 0 || waiting > 0 || !subscription) return;
    subscription = undefined;
    // ioredis sends commands in order, so a later SUBSCRIBE goes out after this.
    unsubscribeFrom(options.subscriber, channel).catch((err: unknown) => options.log.warn({ err }, 'admin event stream could not unsubscribe'));
  };
  const remove = (client: Client) => {
    if (!clients.delete(client)) return;
    options.metrics.setEventClients(clients.size);
    unsubscribeIfUnwanted();
  };

  const drop = (client: Client, reason: 'slow' | 'unresponsive', code: number, text: string) => {
    remove(client);
    options.metrics.countEventClientDropped(reason);
    options.log.warn({ reason, bufferedBytes: client.socket.bufferedAmount }, 'admin event client dropped');
    client.socket.close(code, text);
    // The close frame waits behind the unread data; do not wait for it forever.
    setTimeout(() => client.socket.terminate(), options.closeGraceMs).unref();
  };

  onChannelMessage(options.subscriber, channel, (raw) => {
    let conversationId: unknown;
    try {
      conversationId = (JSON.parse(raw) as { conversationId?: unknown }).conversationId;
    } catch {
      options.log.warn('ignored a malformed lifecycle event');
      return;
    }
    for (const client of clients) {
      if (client.conversationId !== undefined && client.conversationId !== conversationId) continue;
      if (client.socket.readyState !== client.socket.OPEN) continue;
      if (client.socket.bufferedAmount > options.maxBufferedBytes) {
        drop(client, 'slow', EventStreamClose.SlowClient, 'client too slow');
        continue;
      }
      client.socket.send(raw);
    }
  });

  const pinger = setInterval(() => {
    for (const client of clients) {
      if (!client.alive) {
        drop(client, 'unresponsive', EventStreamClose.GoingAway, 'no pong');
        continue;
      }
      client.alive = false;
      client.socket.ping();
    }
  }, options.pingIntervalMs);
  pinger.unref();

  return {
    async add(socket, conversationId, readyTimeoutMs) {
      if (clients.size + waiting >= options.maxClients) {
        options.metrics.countEventClientDropped('full');
        socket.close(EventStreamClose.TooManyClients, 'too many stream clients');
        return 'full';
      }
      waiting++;
      let timer: NodeJS.Timeout | undefined;
      let live = false;
      try {
        await Promise.race([subscribe(), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), readyTimeoutMs)))]);
        live = true;
      } catch {
        // Failure is logged by subscribe(). After a timeout the subscription still under way is kept only if another client wants it (below).
      } finally {
        clearTimeout(timer);
        waiting--;
      }
      if (!live || socket.readyState !== socket.OPEN) {
        unsubscribeIfUnwanted();
        if (!live) socket.close(EventStreamClose.Unavailable, 'event stream unavailable');
        return 'unavailable';
      }
      const client: Client = { socket, conversationId, alive: true };
      clients.add(client);
      options.metrics.setEventClients(clients.size);
      socket.on('pong', () => (client.alive = true));
      socket.on('close', () => remove(client));
      return 'added';
    },
    get clientCount() {
      return clients.size;
    },
    async close() {
      clearInterval(pinger);
      for (const client of clients) client.socket.close(EventStreamClose.GoingAway, 'gateway shutting down');
      clients.clear();
      options.metrics.setEventClients(0);
      options.subscriber.disconnect();
    },
  };
}
