import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseSlackEvent, PlatformError } from '@switchboard/platforms';
import type { IngressDeps } from '../ingress/accept-inbound.ts';
import { ingestInbound } from '../ingress/ingest-inbound.ts';
import { handleSlackInteraction } from './slack-interactions.ts';
import { verifySlackRequest, type SlackRouteOptions } from './slack-request.ts';


/**
 * `POST /webhooks/slack/events` (Slack Events API docs). The signature
 * covers the raw bytes, so the route lives in its own encapsulated scope whose
 * parsers hand the handler the body untouched; other routes keep Fastify's
 * JSON parser. Answers within Slack's 3 s: store once, enqueue, acknowledge.
 */
export async function registerSlackEvents(app: FastifyInstance, deps: IngressDeps, options: SlackRouteOptions): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(['application/json', 'application/x-www-form-urlencoded'], { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post('/webhooks/slack/events', (request, reply) => handleSlackEvent(request, reply, deps, options));
    scope.post('/webhooks/slack/interactions', (request, reply) => handleSlackInteraction(request, reply, deps, options));
  });
}

/**
 * Slack waits 3 s for an answer, then counts the delivery failed and retries
 * (or gives up after three retries). A store must land inside that wait or
 * not at all: 2.5 s leaves half a second for the answer to travel and for the
 * gateway's and Postgres's clocks to differ (docs/guarantees.md, "Order").
 */
export const slackStoreBudgetMs = 2_500;

async function handleSlackEvent(request: FastifyRequest, reply: FastifyReply, deps: IngressDeps, options: SlackRouteOptions) {
  const receivedAt = Date.now();
  const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const isForm = String(request.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded');
  const form = isForm ? new URLSearchParams(raw.toString('utf8')) : undefined;
  const retry = { retryNum: request.headers['x-slack-retry-num'], retryReason: request.headers['x-slack-retry-reason'] };

  // Slack's certificate check arrives unsigned and carries nothing to store.
  if (form?.get('ssl_check') === '1') return reply.code(200).send();
  // Interactivity (buttons) posts a form with a JSON `payload`: served as on /webhooks/slack/interactions.
  if (form?.has('payload')) return handleSlackInteraction(request, reply, deps, options);

  const verified = verifySlackRequest(request, raw, options.signingSecret);
  if (!verified.ok) {
    request.log.warn({ route: 'slack', outcome: 'unauthorized', reason: verified.reason, ...retry }, 'slack event rejected: bad signature');
    return reply.code(401).send({ ok: false, error: 'unauthorized' });
  }

  let body: unknown;
  try {
    if (form) throw new PlatformError('INVALID_PAYLOAD', 'form body without payload');
    body = JSON.parse(raw.toString('utf8'));
  } catch (error) {
    request.log.warn({ route: 'slack', reason: (error as Error).message }, 'slack event rejected: malformed body');
    return reply.code(400).send({ ok: false, error: 'INVALID_PAYLOAD', message: 'body is not valid JSON' });
  }

  if (isRecord(body) && body.type === 'url_verification') {
    if (typeof body.challenge !== 'string') return reply.code(400).send({ ok: false, error: 'INVALID_PAYLOAD', message: 'url_verification without challenge' });
    return { challenge: body.challenge };
  }

  const ingested = await ingestInbound(deps, () => parseSlackEvent(body, options.context), { notAfterMs: receivedAt + slackStoreBudgetMs });
  switch (ingested.kind) {
    case 'malformed':
      request.log.warn({ route: 'slack', code: ingested.error.code, reason: ingested.error.message }, 'slack event rejected: malformed event');
      return reply.code(400).send({ ok: false, error: ingested.error.code, message: ingested.error.message });
    case 'skipped':
      return { ok: true, ignored: ingested.parsed.kind === 'ignored' ? ingested.parsed.reason : ingested.parsed.kind };
    case 'accepted':
      // A retry of a stored event is dropped by the shared dedupe on event_id; one never stored is processed like the first.
      if (retry.retryNum !== undefined) request.log.info({ route: 'slack', eventId: ingested.message.eventId, outcome: ingested.outcome, ...retry }, 'slack retry handled');
      return { ok: true, outcome: ingested.outcome };
    case 'not_accepted':
      request.log.error({ route: 'slack', code: ingested.error.code, err: ingested.error.cause }, 'slack event not accepted; Slack will retry');
      return reply.code(503).send({ ok: false, error: ingested.error.code });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
