import type { FastifyInstance, FastifyReply } from 'fastify';
import { sleepUnlessAborted } from './abortable.ts';
import { classifyError } from './errors.ts';
import type { EventHub } from './event-hub.ts';
import { watchClient } from './http-helpers.ts';
import { createGetUpdates } from './telegram-get-updates.ts';
import type { MethodHandler } from './telegram-method-types.ts';
import { basicMethods } from './telegram-methods.ts';
import { mergeParams } from './telegram-params.ts';
import { getTelegramFile, type MediaStore } from './media-files.ts';
import type { TelegramStore } from './telegram-store.ts';
import { TelegramApiError, type TelegramFault } from './telegram-types.ts';

export interface BotApiDeps {
  /** Users' files, for getFile. */
  media?: MediaStore;
  store: TelegramStore;
  hub: EventHub;
  shutdown: AbortSignal;
}

interface BotApiRoute {
  Params: { token: string; method: string };
}

/** `GET|POST /bot<token>/<method>` with the Bot API's envelope, auth, faults and errors. */
export async function registerBotApi(app: FastifyInstance, deps: BotApiDeps): Promise<void> {
  const { store, hub, shutdown } = deps;
  const methods = new Map<string, MethodHandler>([...basicMethods, ['getupdates', createGetUpdates(hub)]]);
  const { media } = deps;
  if (media) {
    methods.set('getfile', ({ params }) => {
      const file = getTelegramFile(media, params.file_id);
      if (!file) throw new TelegramApiError(400, 'Bad Request: invalid file_id');
      return { result: file };
    });
  }

  // Body and framework errors on these routes still answer in the Bot API's envelope.
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof TelegramApiError) return sendTelegramError(reply, error);
    const { statusCode, message } = classifyError(error);
    const description = statusCode < 500 ? `Bad Request: ${message}` : 'Internal Server Error';
    return sendTelegramError(reply, new TelegramApiError(statusCode < 500 ? 400 : 500, description));
  });

  app.route<BotApiRoute>({
    method: ['GET', 'POST'],
    url: '/bot:token/:method',
    handler: async (request, reply) => {
      const { token, method } = request.params;
      if (store.options.botToken !== undefined && token !== store.options.botToken) {
        return sendTelegramError(reply, new TelegramApiError(401, 'Unauthorized'));
      }
      const handler = methods.get(method.toLowerCase());
      if (!handler) return sendTelegramError(reply, new TelegramApiError(404, 'Not Found'));
      store.calls.set(method, (store.calls.get(method) ?? 0) + 1);

      const { signal, clientGone } = watchClient(reply, shutdown);
      const fault = store.takeFault(method);
      if (fault) {
        const failure = await applyFault(fault, signal);
        if (failure) return sendTelegramError(reply, failure);
      }
      const outcome = await handler({ store, params: mergeParams(request.query, request.body), token, signal });
      // Nobody is left to read the answer of a delayed call or long poll.
      if (clientGone()) return reply.hijack();
      return reply.send({ ok: true, result: outcome.result, ...(outcome.description ? { description: outcome.description } : {}) });
    },
  });
}

const serverErrorText: Record<number, string> = {
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** Delay faults hold the call and let it through; the others replace its answer. */
async function applyFault(fault: TelegramFault, signal: AbortSignal): Promise<TelegramApiError | undefined> {
  if (fault.kind === 'delay') {
    await sleepUnlessAborted(fault.delayMs, signal);
    return undefined;
  }
  if (fault.kind === '429') {
    return new TelegramApiError(429, `Too Many Requests: retry after ${fault.retryAfter}`, { retry_after: fault.retryAfter });
  }
  // What Telegram answers markup it refuses (the Bot API's wording), whatever the call carried.
  if (fault.kind === 'refuse-markup') return new TelegramApiError(400, "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0");
  return new TelegramApiError(fault.status, serverErrorText[fault.status] ?? 'Internal Server Error');
}

export function sendTelegramError(reply: FastifyReply, error: TelegramApiError): FastifyReply {
  return reply.code(error.errorCode).send({
    ok: false,
    error_code: error.errorCode,
    description: error.description,
    ...(error.parameters ? { parameters: error.parameters } : {}),
  });
}
