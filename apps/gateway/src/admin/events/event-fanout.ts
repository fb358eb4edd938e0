import type { Redis } from 'ioredis';
import type { WebSocket } from 'ws';
import type { Logger } from '@switchboard/logger';
import { eventsChannel } from '@switchboard/queue';
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
  subscriber: Redis;
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
  /** Resolves once the Redis subscription is live. */
  ready: Promise<void>;
  /** Adds a client; false if the gateway is full (the socket was closed). */
  add(socket: WebSocket, conversationId: number | undefined): boolean;
  readonly clientCount: number;
  close(): Promise<void>;
}

/**
 * One Redis subscription per gateway process, fanned out to every admin
 * WebSocket. Each event goes out in the order Redis delivered it. Nothing is
 * queued per client beyond the socket's own send buffer, and a client whose
 * buffer passes the limit is closed (4008): a slow reader costs at most
 * `maxBufferedBytes`, never unbounded memory.
 */
export function createEventFanout(options: EventFanoutOptions): EventFanout {
  const clients = new Set<Client>();
  const channel = eventsChannel(options.prefix);

  const drop = (client: Client, reason: 'slow' | 'unresponsive', code: number, text: string) => {
    clients.delete(client);
    options.metrics.setEventClients(clients.size);
    options.metrics.countEventClientDropped(reason);
    options.log.warn({ reason, bufferedBytes: client.socket.bufferedAmount }, 'admin event client dropped');
    client.socket.close(code, text);
    // The close frame waits behind the unread data; do not wait for it forever.
    setTimeout(() => client.socket.terminate(), options.closeGraceMs).unref();
  };

  options.subscriber.on('message', (from: string, raw: string) => {
    if (from !== channel) return;
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
  const ready = options.subscriber.subscribe(channel).then(() => undefined);
  ready.catch((err: unknown) => options.log.error({ err }, 'admin event stream could not subscribe'));

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
    ready,
    add(socket, conversationId) {
      if (clients.size >= options.maxClients) {
        options.metrics.countEventClientDropped('full');
        socket.close(EventStreamClose.TooManyClients, 'too many stream clients');
        return false;
      }
      const client: Client = { socket, conversationId, alive: true };
      clients.add(client);
      options.metrics.setEventClients(clients.size);
      socket.on('pong', () => (client.alive = true));
      socket.on('close', () => {
        clients.delete(client);
        options.metrics.setEventClients(clients.size);
      });
      return true;
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
