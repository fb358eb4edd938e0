import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { waitUntil } from './abortable.ts';
import { SimError } from './errors.ts';
import { simEventName, type EventHub } from './event-hub.ts';
import { readIntQuery, watchClient } from './http-helpers.ts';
import { baseUrlOf, requireFile, slackFileObject, type MediaStore } from './media-files.ts';
import { parseBody } from './parse-body.ts';
import { buildEventEnvelope, deliverToRequestUrl, slackEventInputSchema, type SigningMode } from './slack-events.ts';
import type { SlackStore } from './slack-store.ts';
import { slackWorkspace, type SlackSentRecord } from './slack-types.ts';
import { registerMethodFaultRoutes } from './method-faults.ts';

export interface SlackControlDeps {
  store: SlackStore;
  hub: EventHub;
  shutdown: AbortSignal;
  media?: MediaStore;
}

const urlVerificationSchema = z
  .object({ challenge: z.string().min(1).optional(), signing: z.enum(['valid', 'bad', 'stale', 'none']).default('valid') })
  .strict();

const requestUrlSchema = z.object({ url: z.string().url().nullable() }).strict();

const maxWaitMs = 300_000;

type Query = Record<string, unknown>;

/** `/control/slack/*`: act as a Slack user, inspect what the bot posted, arm faults. */
export async function registerSlackControl(app: FastifyInstance, deps: SlackControlDeps): Promise<void> {
  registerSlackEventRoutes(app, deps);
  registerRequestUrlRoutes(app, deps.store);
  registerSlackReadingRoutes(app, deps);
  registerMethodFaultRoutes(app, deps.store, { path: '/control/slack/faults', minRetryAfter: 0 });
}

/** Where events go and with which secret; refuses when either is missing for the signing asked for. */
function requestUrlTarget(store: SlackStore, signing: SigningMode): { url: string; secret: string } {
  if (store.requestUrl === undefined) throw new SimError('SIM_NO_REQUEST_URL', 'no Slack Request URL is set (slackEventsUrl, SIM_SLACK_EVENTS_URL or POST /control/slack/request-url)', 409);
  const secret = store.options.signingSecret;
  if (secret === undefined && signing !== 'none') throw new SimError('SIM_NO_SIGNING_SECRET', 'no Slack signing secret is configured (slackSigningSecret, SLACK_SIGNING_SECRET)', 409);
  return { url: store.requestUrl, secret: secret ?? '' };
}

/** What Slack POSTs to the app's Request URL: user events and the url_verification handshake. */
function registerSlackEventRoutes(app: FastifyInstance, deps: SlackControlDeps): void {
  const { store } = deps;

  app.post('/control/slack/events', async (request) => {
    const input = parseBody(slackEventInputSchema, request.body);
    const { url, secret } = requestUrlTarget(store, input.signing);
    const media = deps.media;
    const files = input.files && media ? input.files.map((id) => slackFileObject(baseUrlOf(request), requireFile(media, id))) : undefined;
    const { envelope, ts } = buildEventEnvelope(store, input, files);
    const attempts = await deliverToRequestUrl(deps, JSON.stringify(envelope), {
      url,
      secret,
      signing: input.signing,
      retryOnFailure: input.retryOnFailure,
      ...(input.retryNum !== undefined ? { firstRetry: { num: input.retryNum, reason: input.retryReason } } : {}),
      label: `event ${envelope.event_id}`,
    });
    const last = attempts[attempts.length - 1];
    return { event_id: envelope.event_id, ts, delivered: last !== undefined && last.status >= 200 && last.status < 300, attempts, envelope };
  });

  app.post('/control/slack/url-verification', async (request) => {
    const input = parseBody(urlVerificationSchema, request.body ?? {});
    const { url, secret } = requestUrlTarget(store, input.signing);
    const challenge = input.challenge ?? randomBytes(24).toString('base64url');
    const body = JSON.stringify({ token: slackWorkspace.verificationToken, challenge, type: 'url_verification' });
    const [attempt] = await deliverToRequestUrl(deps, body, { url, secret, signing: input.signing, retryOnFailure: false, label: 'url_verification' });
    const answer = attempt?.body;
    // Slack takes the challenge back as plain text, JSON {challenge} or a form field.
    const echoed = answer === challenge || (typeof answer === 'object' && answer !== null && (answer as { challenge?: unknown }).challenge === challenge);
    return { challenge, status: attempt?.status ?? 0, body: answer ?? null, verified: attempt?.status === 200 && echoed };
  });
}

function registerRequestUrlRoutes(app: FastifyInstance, store: SlackStore): void {
  app.get('/control/slack/request-url', async () => ({ url: store.requestUrl ?? null }));

  app.post('/control/slack/request-url', async (request) => {
    const { url } = parseBody(requestUrlSchema, request.body);
    store.requestUrl = url ?? undefined;
    return { ok: true, url };
  });
}

/** What the bot did: its reactions, the messages it posted, and a long poll for the next ones. */
function registerSlackReadingRoutes(app: FastifyInstance, deps: SlackControlDeps): void {
  const { store, hub, shutdown } = deps;

  // The bot's reactions on one message now (channel + ts), and how many reaction calls were accepted in all.
  app.get('/control/slack/reactions', async (request) => {
    const query = request.query as Query;
    const channel = typeof query.channel === 'string' ? query.channel : '';
    const ts = typeof query.ts === 'string' ? query.ts : '';
    return { names: store.reactions.on(`${channel}:${ts}`), calls: store.reactions.calls, all: store.reactions.all() };
  });

  app.get('/control/slack/sent', async (request) => selectSent(store, request.query as Query));

  app.get('/control/slack/wait', async (request, reply) => {
    const query = request.query as Query;
    const count = readIntQuery(query, 'count', { fallback: 1, min: 1 }) as number;
    const timeoutMs = readIntQuery(query, 'timeout_ms', { fallback: 10_000, min: 0, max: maxWaitMs }) as number;
    const { signal } = watchClient(reply, shutdown);
    // Called on every recorded event: look at the count before copying anything.
    const check = () => {
      if (store.sentTo(typeof query.channel === 'string' && query.channel !== '' ? query.channel : undefined).length < count) return undefined;
      const sent = selectSent(store, query);
      return sent.length >= count ? sent : undefined;
    };
    const sent = await waitUntil(check, { emitter: hub, eventName: simEventName, timeoutMs, signal });
    if (sent) return sent;
    return reply.code(408).send({ error: 'timeout', code: 'SIM_WAIT_TIMEOUT', sent: selectSent(store, query) });
  });
}

/** `channel` and `thread_ts` (both optional) filters shared by /sent and /wait. */
function selectSent(store: SlackStore, query: Query): SlackSentRecord[] {
  const channel = typeof query.channel === 'string' && query.channel !== '' ? query.channel : undefined;
  const threadTs = typeof query.thread_ts === 'string' && query.thread_ts !== '' ? query.thread_ts : undefined;
  const sent = store.sentTo(channel);
  return threadTs === undefined ? [...sent] : sent.filter((record) => record.thread_ts === threadTs);
}
