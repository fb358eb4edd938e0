import type { FastifyInstance } from 'fastify';
import { equalsConstantTime, parseTelegramUpdate, PlatformError, telegramUnknownChatType, type TelegramParseContext } from '@switchboard/platforms';
import { acceptInbound, IngressError, type IngressDeps } from '../ingress/accept-inbound.ts';

export interface TelegramRouteOptions {
  secret: string;
  context: TelegramParseContext;
}

export function registerTelegramWebhook(app: FastifyInstance, deps: IngressDeps, options: TelegramRouteOptions): void {
  app.post(
    '/webhooks/telegram',
    {
      // Verify before the body is even parsed: a forged request leaves no trace.
      onRequest: async (request, reply) => {
        const header = request.headers['x-telegram-bot-api-secret-token'];
        if (!equalsConstantTime(typeof header === 'string' ? header : undefined, options.secret)) {
          request.log.warn({ route: 'telegram', outcome: 'unauthorized' }, 'webhook rejected: bad secret token');
          return reply.code(401).send({ ok: false, error: 'unauthorized' });
        }
      },
    },
    async (request, reply) => {
      let parsed;
      try {
        parsed = parseTelegramUpdate(request.body, options.context);
      } catch (error) {
        if (error instanceof PlatformError) {
          request.log.warn({ route: 'telegram', code: error.code, reason: error.message }, 'webhook rejected: malformed update');
          return reply.code(400).send({ ok: false, error: error.code, message: error.message });
        }
        throw error;
      }
      if (parsed.kind === 'ignored') {
        if (parsed.reason === telegramUnknownChatType) {
          // Acknowledged so Telegram stops re-delivering it; counted, since it means the Bot API has grown a chat type.
          request.log.warn({ route: 'telegram', reason: parsed.reason }, 'webhook update ignored: unknown chat type');
          deps.countRejected?.('telegram', parsed.reason);
        }
        return { ok: true, ignored: parsed.reason };
      }
      try {
        const outcome = await acceptInbound(deps, parsed.message);
        return { ok: true, outcome };
      } catch (error) {
        if (error instanceof IngressError) {
          request.log.error({ route: 'telegram', code: error.code, err: error.cause }, 'webhook not accepted; Telegram will retry');
          return reply.code(503).send({ ok: false, error: error.code });
        }
        throw error;
      }
    },
  );
}
