import type { FastifyInstance } from 'fastify';
import { simEventName, type EventHub, type SimEvent } from './event-hub.ts';
import { watchClient } from './http-helpers.ts';

// Proxies drop idle streams; a comment line every so often keeps the demo's view alive.
const heartbeatMs = 15_000;

/** `GET /control/events`: every record as Server-Sent Events, for the demo's live view. */
export async function registerEventStream(app: FastifyInstance, hub: EventHub, shutdown: AbortSignal): Promise<void> {
  app.get('/control/events', async (_request, reply) => {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.write(': switchboard sim events\n\n');

    const onEvent = (event: SimEvent) => {
      res.write(`event: ${event.type}\ndata: ${JSON.stringify({ at: event.at, data: event.data })}\n\n`);
    };
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), heartbeatMs);
    heartbeat.unref();
    hub.on(simEventName, onEvent);

    const { signal } = watchClient(reply, shutdown);
    signal.addEventListener(
      'abort',
      () => {
        clearInterval(heartbeat);
        hub.off(simEventName, onEvent);
        res.end();
      },
      { once: true },
    );
  });
}
