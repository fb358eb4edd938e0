import type { FastifyInstance, FastifyReply } from 'fastify';
import type { GatewayMetrics } from './gateway-metrics.ts';

const webhookPlatforms: Record<string, string> = {
  '/webhooks/telegram': 'telegram',
  '/webhooks/slack/events': 'slack',
  '/webhooks/discord/interactions': 'discord',
};

/**
 * `GET /metrics` (Prometheus text, unauthenticated like /healthz: scrape it
 * from inside the network) and the count of inbound webhook deliveries. The
 * count is taken at the HTTP edge from what the gateway answered, so every
 * webhook route is counted the same way without each one reporting (Discord
 * messages that arrive over its Gateway WebSocket are not HTTP and not counted).
 */
export function registerMetrics(app: FastifyInstance, metrics: GatewayMetrics): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const platform = webhookPlatforms[request.routeOptions.url ?? ''];
    if (platform) metrics.countInbound(platform, classifyOutcome(platform, reply, payload));
    return payload;
  });
  app.get('/metrics', async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()));
}

function classifyOutcome(platform: string, reply: FastifyReply, payload: unknown): string {
  const status = reply.statusCode;
  if (status === 401) return 'unauthorized';
  if (status === 503) return 'unavailable';
  if (status >= 500) return 'error';
  if (status >= 400) return 'rejected';
  const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '';
  const outcome = /"outcome":"([a-z_]{1,32})"/.exec(body)?.[1];
  if (outcome) return outcome;
  // Discord answers an accepted interaction with a deferred response (type 5) and nothing else.
  if (platform === 'discord' && /"type":5\b/.test(body)) return 'accepted';
  return 'ignored';
}
