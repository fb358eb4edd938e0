import fastifyHelmet from '@fastify/helmet';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import { TypeBoxValidatorCompiler, registerAjvFormats } from '@fastify/type-provider-typebox';
import fastifyWebsocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import { normaliseText } from '@switchboard/core';
import { createRedisConnection, redisReachOf } from '@switchboard/queue';
import { createAdminAuthHook } from './admin-auth.ts';
import { createAdminActions, type AdminContext, type AdminDeps } from './admin-context.ts';
import { handleAdminError } from './admin-errors.ts';
import { parseAdminTokens } from './admin-tokens.ts';
import { registerBullBoard } from './bull-board.ts';
import { registerConsole } from './console-route.ts';
import { createEventFanout, type EventFanout } from './events/event-fanout.ts';
import { eventsOpenApiPath, registerEventsRoute } from './events/events-route.ts';
import { createFailureLimiter } from './failure-limiter.ts';
import { registerAuditRoutes } from './routes/audit-routes.ts';
import { registerConversationActionRoutes } from './routes/conversation-action-routes.ts';
import { registerConversationRoutes } from './routes/conversation-routes.ts';
import { registerOutboxRoutes } from './routes/outbox-routes.ts';
import { registerPairingRoutes } from './routes/pairing-routes.ts';
import { registerQueueRoutes } from './routes/queue-routes.ts';
import { registerRestartRoutes } from './routes/restart-routes.ts';
import { registerScheduleRoutes } from './routes/schedule-routes.ts';
import { registerSessionRoutes } from './routes/session-routes.ts';
import { registerTurnRoutes } from './routes/turn-routes.ts';
import { adminSecurityHeaders, allowThirdPartyStyles } from './security-headers.ts';

/** Failed authentications one address may make per window before it is refused for the rest of it. */
const authFailureLimit = { maxFailures: 10, windowMs: 60_000, maxAddresses: 10_000 };
const eventStreamLimits = { maxBufferedBytes: 1024 * 1024, maxClients: 1000, pingIntervalMs: 30_000, closeGraceMs: 5_000 };

registerAjvFormats();

/** Everything under /admin (docs/admin.md), once ADMIN_TOKEN is set; register-admin.ts loads this module only then. */
export async function registerAdminSurface(app: FastifyInstance, deps: AdminDeps, adminToken: string): Promise<void> {
  const tokens = parseAdminTokens(adminToken);
  const ctx: AdminContext = { ...deps, tokens, actions: createAdminActions(deps) };
  const fanout = startEventFanout(app, deps);
  const authenticate = createAdminAuthHook({
    tokens,
    limiter: createFailureLimiter(authFailureLimit),
    metrics: deps.metrics,
    log: deps.log,
    queryTokenRoutes: new Set(['/admin/events']),
  });

  await app.register(
    async (admin) => {
      admin.setValidatorCompiler(TypeBoxValidatorCompiler);
      admin.setErrorHandler(handleAdminError);
      await admin.register(fastifyHelmet, adminSecurityHeaders);
      await admin.register(registerConsole);
      await admin.register(async (secured) => registerSecuredSurface(secured, { ctx, authenticate, fanout }));
    },
    { prefix: '/admin' },
  );
  deps.log.info({ actors: tokens.map((token) => token.name) }, 'admin API on at /admin');
}

/** One subscription per gateway process, whatever the number of stream clients; closed with the app. */
function startEventFanout(app: FastifyInstance, deps: AdminDeps): EventFanout {
  const subscriber = createRedisConnection(redisReachOf(deps.config), 'subscriber');
  subscriber.on('error', (err) => deps.log.warn({ err }, 'admin event subscriber error'));
  const fanout = createEventFanout({ subscriber, prefix: deps.config.REDIS_PREFIX, log: deps.log, metrics: deps.metrics, ...eventStreamLimits });
  app.addHook('onClose', async () => fanout.close());
  return fanout;
}

type AdminAuthHook = ReturnType<typeof createAdminAuthHook>;

interface SecuredSurface {
  ctx: AdminContext;
  authenticate: AdminAuthHook;
  fanout: EventFanout;
}

/** Everything behind authentication: the request hooks, the OpenAPI document and its UI, and every admin route. */
async function registerSecuredSurface(secured: FastifyInstance, { ctx, authenticate, fanout }: SecuredSurface): Promise<void> {
  addSecuredHooks(secured, authenticate);
  await registerOpenApi(secured);
  await secured.register(fastifyWebsocket, { options: { maxPayload: 4096 } });
  secured.get('/openapi.json', { schema: { hide: true } }, async () => secured.swagger());
  registerSessionRoutes(secured, ctx);
  registerConversationRoutes(secured, ctx);
  registerConversationActionRoutes(secured, ctx);
  registerTurnRoutes(secured, ctx);
  registerQueueRoutes(secured, ctx);
  registerOutboxRoutes(secured, ctx);
  registerRestartRoutes(secured, ctx);
  registerPairingRoutes(secured, ctx);
  registerScheduleRoutes(secured, ctx);
  registerAuditRoutes(secured, ctx);
  registerEventsRoute(secured, fanout);
  await registerBullBoard(secured, [ctx.queue, ctx.schedules]);
}

function addSecuredHooks(secured: FastifyInstance, authenticate: AdminAuthHook): void {
  secured.decorateRequest('adminActor', '');
  secured.addHook('onRequest', authenticate);
  secured.addHook('onResponse', async (request, reply) => {
    // A refused WebSocket upgrade leaves a socket that no HTTP parser owns any more: close it, or it lingers half-open.
    if (request.headers.upgrade !== undefined && reply.statusCode !== 101) request.raw.socket?.destroy();
  });
  secured.addHook('preValidation', async (request) => {
    // Actions without options may be posted with no body at all.
    if (request.body === undefined && request.method !== 'GET' && request.method !== 'HEAD') request.body = {};
    // Text is normalised where it is parsed, as on the webhooks: a NUL or a lone surrogate in a suspend
    // reason, an audit filter or a job id failed its query or its audit row with a 500 (found by the fuzzer, issue 17).
    for (const part of [request.params, request.query, request.body]) normaliseStringFields(part);
  });
}

/** The OpenAPI document (the routes' schemas plus the WebSocket stream, which swagger cannot see) and its UI at /admin/docs. */
async function registerOpenApi(secured: FastifyInstance): Promise<void> {
  await secured.register(fastifySwagger, {
    openapi: {
      info: { title: 'Switchboard admin API', version: '1', description: 'Operate a running Switchboard: conversations, actions, turns, queues, outbox, pairing, schedules, audit log, live events. See docs/admin.md.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An ADMIN_TOKEN token' } } },
      security: [{ bearer: [] }],
    },
    transformObject: (documentObject) => {
      const document = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject;
      document.paths = { ...document.paths, '/admin/events': eventsOpenApiPath };
      return document;
    },
  });
  await secured.register(async (docs) => {
    docs.addHook('onRequest', allowThirdPartyStyles);
    await docs.register(fastifySwaggerUi, { routePrefix: '/docs' });
  });
}

/** Normalises the top-level string values of a parsed request part in place (admin bodies and queries are flat; deeper values are refused by the schemas). */
function normaliseStringFields(part: unknown): void {
  if (typeof part !== 'object' || part === null || Array.isArray(part)) return;
  const record = part as Record<string, unknown>;
  for (const [key, value] of Object.entries(record)) if (typeof value === 'string') record[key] = normaliseText(value);
}
