import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { EventFanout } from './event-fanout.ts';

/** How long a connecting client waits for the gateway's Redis subscription before it is closed with 1011. */
const readyTimeoutMs = 3000;

/**
 * `GET /admin/events`: a WebSocket stream of lifecycle events (docs/restarts.md, "Lifecycle events"),
 * one JSON object per message, `?conversation=ID` to follow one
 * conversation. The first message is `{"type":"stream.opened"}`: from then on
 * the client is subscribed and misses nothing this gateway receives.
 */
/**
 * @fastify/websocket hides WebSocket routes from the OpenAPI document, so the
 * stream's entry is added to it by hand (register-admin's transformObject).
 */
export const eventsOpenApiPath = {
  get: {
    tags: ['events'],
    summary: 'Live lifecycle events (WebSocket)',
    description:
      'Upgrade to a WebSocket (Connection: Upgrade). Authenticate with the Bearer header, the session cookie, or ?token=. Each message is one JSON lifecycle event (type, conversationId, sessionId?, turnId?, outcome?, childSessionId?, reason?, at); the first is {"type":"stream.opened"}. Close codes: 4008 too slow (send buffer over 1 MiB), 4029 too many clients, 1011 events unavailable, 1001 gateway stopping or no pong.',
    parameters: [
      { in: 'query', name: 'conversation', required: false, schema: { type: 'integer', minimum: 1 }, description: 'Only this conversation’s events' },
      { in: 'query', name: 'token', required: false, schema: { type: 'string' }, description: 'An admin token, for clients that cannot set headers' },
    ],
    responses: { '101': { description: 'Switching protocols: the stream' }, '401': { description: 'Missing or wrong credentials' }, '429': { description: 'Too many failed authentications' } },
  },
};

export function registerEventsRoute(scope: FastifyInstance, fanout: EventFanout): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().get(
    '/events',
    {
      websocket: true,
      schema: {
        querystring: Type.Object(
          {
            conversation: Type.Optional(Type.Integer({ minimum: 1, description: 'Only this conversation’s events' })),
            token: Type.Optional(Type.String({ description: 'An admin token, for clients that cannot set headers (it may end up in proxy logs)' })),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (socket, request) => {
      const conversationId = request.query.conversation;
      if ((await fanout.add(socket, conversationId, readyTimeoutMs)) !== 'added') return;
      socket.send(JSON.stringify({ type: 'stream.opened', conversationId: conversationId ?? null, at: new Date().toISOString() }));
    },
  );
}
