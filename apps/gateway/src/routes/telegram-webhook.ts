import type { FastifyInstance } from 'fastify';
import type { Api } from 'grammy';
import { equalsConstantTime, parseTelegramUpdate, telegramUnknownChatType, type TelegramParseContext } from '@switchboard/platforms';
import { answerTelegramCommandPress, answerTelegramPress } from '../approvals/answer-press.ts';
import type { IngressDeps } from '../ingress/accept-inbound.ts';
import { ingestInbound } from '../ingress/ingest-inbound.ts';

export interface TelegramRouteOptions {
  secret: string;
  context: TelegramParseContext;
  /** Answers button presses (answerCallbackQuery). */
  api: Api;
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
      const ingested = await ingestInbound(deps, () => parseTelegramUpdate(request.body, options.context));
      switch (ingested.kind) {
        case 'malformed':
          request.log.warn({ route: 'telegram', code: ingested.error.code, reason: ingested.error.message }, 'webhook rejected: malformed update');
          return reply.code(400).send({ ok: false, error: ingested.error.code, message: ingested.error.message });
        case 'skipped':
          if (ingested.parsed.kind === 'button') {
            try {
              await answerTelegramPress(deps, options.api, ingested.parsed.press, deps.log);
            } catch (err) {
              request.log.error({ route: 'telegram', err }, 'button press not answered; Telegram will retry');
              return reply.code(503).send({ ok: false, error: 'STORE_FAILED' });
            }
            return { ok: true, outcome: 'answered' };
          }
          if (ingested.parsed.reason === telegramUnknownChatType) {
            // Acknowledged so Telegram stops re-delivering it; counted, since it means the Bot API has grown a chat type.
            request.log.warn({ route: 'telegram', reason: ingested.parsed.reason }, 'webhook update ignored: unknown chat type');
            deps.countRejected?.('telegram', ingested.parsed.reason);
          }
          return { ok: true, ignored: ingested.parsed.reason };
        case 'accepted':
          await answerTelegramCommandPress(options.api, ingested.message, deps.log);
          return { ok: true, outcome: ingested.outcome };
        case 'not_accepted':
          request.log.error({ route: 'telegram', code: ingested.error.code, err: ingested.error.cause }, 'webhook not accepted; Telegram will retry');
          return reply.code(503).send({ ok: false, error: ingested.error.code });
      }
    },
  );
}
