import { Api, GrammyError, HttpError } from 'grammy';
import { PlatformError } from '../errors.ts';
import type { PlatformSender, SentMessage } from '../types.ts';
import { renderTelegramHtml } from './render-html.ts';
import { readTelegramReplyTarget } from './reply-target.ts';

export interface TelegramSenderOptions {
  token: string;
  /** Bot API root without trailing slash; the simulator's URL in tests. */
  apiRoot: string;
  messageLimit?: number;
}

export function createTelegramSender(options: TelegramSenderOptions): PlatformSender & { api: Api } {
  const api = new Api(options.token, { apiRoot: options.apiRoot.replace(/\/+$/, '') });
  return {
    platform: 'telegram',
    messageLimit: Math.min(options.messageLimit ?? 4096, 4096),
    typingIntervalMs: 4000,
    api,
    async sendText(target, text): Promise<SentMessage> {
      const t = readTelegramReplyTarget(target);
      const options = {
        ...(t.messageThreadId !== undefined ? { message_thread_id: t.messageThreadId } : {}),
        ...(t.replyToMessageId !== undefined ? { reply_parameters: { message_id: t.replyToMessageId, allow_sending_without_reply: true } } : {}),
      };
      try {
        const sent = await api.sendMessage(t.chatId, renderTelegramHtml(text), { ...options, parse_mode: 'HTML' });
        return { platformMessageId: String(sent.message_id) };
      } catch (error) {
        // Telegram rejected the formatting (or the markup made it too long): the same words as plain text.
        if (!(error instanceof GrammyError && error.error_code === 400)) throw toPlatformError(error);
      }
      try {
        const sent = await api.sendMessage(t.chatId, text, options);
        return { platformMessageId: String(sent.message_id) };
      } catch (error) {
        throw toPlatformError(error);
      }
    },
    async sendTyping(target): Promise<void> {
      const t = readTelegramReplyTarget(target);
      try {
        await api.sendChatAction(t.chatId, 'typing', t.messageThreadId !== undefined ? { message_thread_id: t.messageThreadId } : {});
      } catch (error) {
        throw toPlatformError(error);
      }
    },
  };
}

function toPlatformError(error: unknown): PlatformError {
  if (error instanceof GrammyError) {
    if (error.error_code === 429) {
      const seconds = error.parameters.retry_after ?? 1;
      return new PlatformError('RATE_LIMITED', `telegram ${error.method}: rate limited`, { retryAfterMs: seconds * 1000, cause: error });
    }
    if (error.error_code >= 500) return new PlatformError('UNAVAILABLE', `telegram ${error.method}: ${error.error_code}`, { cause: error });
    return new PlatformError('REJECTED', `telegram ${error.method}: ${error.description}`, { cause: error });
  }
  if (error instanceof HttpError) return new PlatformError('UNAVAILABLE', 'telegram: network error', { cause: error });
  return new PlatformError('UNAVAILABLE', 'telegram: unexpected error', { cause: error });
}
