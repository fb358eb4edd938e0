import { ErrorCode, LogLevel, WebClient, type Button, type KnownBlock } from '@slack/web-api';
import { PlatformError } from '../errors.ts';
import type { FullSender, SenderShape } from '../load-on-first-use.ts';
import { escapeSlackText } from './escape-text.ts';
import { renderSlackMrkdwn } from './render-mrkdwn.ts';
import type { ChoiceButton, SentMessage } from '../types.ts';
import { readSlackReplyTarget } from './reply-target.ts';
import type { SlackAuthInfo, SlackClientOptions } from './slack-client-types.ts';

// The only module that imports @slack/web-api; slack-sender.ts loads it on first use.

const defaultTimeoutMs = 30_000;
/** `ok:false` answers that Slack documents as its own trouble, worth another try. */
const transientErrors = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

/** The client createSlackClient (slack-sender.ts) describes: no retries, no sleeping through a 429. */
export function createWebClient(options: SlackClientOptions): WebClient {
  return new WebClient(options.token, {
    slackApiUrl: options.apiUrl,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: options.timeoutMs ?? defaultTimeoutMs,
    // The SDK logs to the console; failures reach our logs as PlatformErrors instead.
    logLevel: LogLevel.ERROR,
  });
}

/** The Slack sender over the Web API; its shape (limits) comes from slack-sender.ts. */
export function createSlackWebSender(options: SlackClientOptions, shape: SenderShape): FullSender {
  const client = createWebClient(options);
  return {
    ...shape,
    async sendText(target, text): Promise<SentMessage> {
      const t = readSlackReplyTarget(target);
      try {
        // Rendered (and so escaped) here, at the last step, so a retried send never renders twice.
        const result = await client.chat.postMessage({ channel: t.channel, text: renderSlackMrkdwn(text), ...(t.threadTs !== undefined ? { thread_ts: t.threadTs } : {}) });
        if (typeof result.ts !== 'string') throw new PlatformError('UNAVAILABLE', 'slack chat.postMessage: answer without ts');
        return { platformMessageId: result.ts };
      } catch (error) {
        throw toPlatformError('chat.postMessage', error);
      }
    },
    async editText(target, platformMessageId, text): Promise<void> {
      const t = readSlackReplyTarget(target);
      try {
        // The same rendering as sendText, so a streamed message ends exactly as a posted one would read.
        await client.chat.update({ channel: t.channel, ts: platformMessageId, text: renderSlackMrkdwn(text) });
      } catch (error) {
        throw toPlatformError('chat.update', error);
      }
    },
    async sendWithButtons(target, text, buttons): Promise<SentMessage> {
      const t = readSlackReplyTarget(target);
      try {
        const result = await client.chat.postMessage({
          channel: t.channel,
          text: escapeSlackText(text),
          blocks: [textBlock(text), { type: 'actions', block_id: 'switchboard_choices', elements: buttons.map(toSlackButton) }],
          ...(t.threadTs !== undefined ? { thread_ts: t.threadTs } : {}),
        });
        if (typeof result.ts !== 'string') throw new PlatformError('UNAVAILABLE', 'slack chat.postMessage: answer without ts');
        return { platformMessageId: result.ts };
      } catch (error) {
        throw toPlatformError('chat.postMessage', error);
      }
    },
    async replaceText(target, platformMessageId, text): Promise<void> {
      const t = readSlackReplyTarget(target);
      try {
        // The blocks are replaced too: the buttons go with them.
        await client.chat.update({ channel: t.channel, ts: platformMessageId, text: escapeSlackText(text), blocks: [textBlock(text)] });
      } catch (error) {
        throw toPlatformError('chat.update', error);
      }
    },
    async sendTyping(): Promise<void> {},
    async setReaction(target, change): Promise<void> {
      const t = readSlackReplyTarget(target);
      if (t.messageTs === undefined) return;
      const timestamp = t.messageTs;
      // Both at once: a remove that fails (no_reaction: the earlier add was refused) must not keep the next reaction away.
      const results = await Promise.allSettled([
        change.remove !== null ? client.reactions.remove({ channel: t.channel, timestamp, name: change.remove }) : undefined,
        change.add !== null ? client.reactions.add({ channel: t.channel, timestamp, name: change.add }) : undefined,
      ]);
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) throw toPlatformError('reactions', failed.reason);
    },
  };
}

/** Slack caps a section's text at 3,000 characters. */
const sectionTextLimit = 3000;

function textBlock(text: string): KnownBlock {
  const escaped = escapeSlackText(text);
  return { type: 'section', text: { type: 'plain_text', text: escaped.length > sectionTextLimit ? `${escaped.slice(0, sectionTextLimit - 1)}…` : escaped, emoji: false } };
}

function toSlackButton(button: ChoiceButton): Button {
  // action_id must be unique within the block: the payload is (it names the choice).
  return { type: 'button', text: { type: 'plain_text', text: button.label }, action_id: button.payload, value: button.payload, ...(button.style ? { style: button.style } : {}) };
}

/** `auth.test`: who the token belongs to, so the gateway can ignore the bot's own messages. */
export async function fetchAuthInfo(client: WebClient): Promise<SlackAuthInfo> {
  try {
    const result = await client.auth.test();
    if (!result.user_id || !result.team_id) throw new PlatformError('REJECTED', 'slack auth.test: answer without user_id or team_id');
    return { userId: result.user_id, botId: result.bot_id, teamId: result.team_id };
  } catch (error) {
    throw toPlatformError('auth.test', error);
  }
}

function toPlatformError(method: string, error: unknown): PlatformError {
  if (error instanceof PlatformError) return error;
  const coded = error as { code?: unknown; retryAfter?: unknown; data?: { error?: unknown }; statusCode?: unknown } | null;
  switch (coded?.code) {
    case ErrorCode.RateLimitedError: {
      const seconds = typeof coded.retryAfter === 'number' && coded.retryAfter >= 0 ? coded.retryAfter : 1;
      return new PlatformError('RATE_LIMITED', `slack ${method}: rate limited`, { retryAfterMs: seconds * 1000, cause: error });
    }
    case ErrorCode.PlatformError: {
      const code = String(coded.data?.error ?? 'error');
      return new PlatformError(transientErrors.has(code) ? 'UNAVAILABLE' : 'REJECTED', `slack ${method}: ${code}`, { cause: error });
    }
    case ErrorCode.HTTPError:
      return new PlatformError('UNAVAILABLE', `slack ${method}: HTTP ${String(coded.statusCode)}`, { cause: error });
    case ErrorCode.RequestError:
      return new PlatformError('UNAVAILABLE', `slack ${method}: network error`, { cause: error });
    default:
      return new PlatformError('UNAVAILABLE', `slack ${method}: unexpected error`, { cause: error });
  }
}
