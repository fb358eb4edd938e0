import type { WebClient } from '@slack/web-api';
import { PlatformError } from '../errors.ts';
import { deferSender, loadOnFirstUse, type SenderShape } from '../load-on-first-use.ts';
import type { PlatformSender } from '../types.ts';
import { escapeSlackText, slackEscapeGrowth } from './escape-text.ts';
import { renderSlackMrkdwn } from './render-mrkdwn.ts';
import type { SlackAuthInfo, SlackClientOptions } from './slack-client-types.ts';

export interface SlackSenderOptions extends SlackClientOptions {
  /**
   * Characters per message before escaping; Slack truncates past 40,000 and
   * recommends 4,000. Capped at 40,000 / 5 so that even a chunk of nothing
   * but `&` still fits once escaped.
   */
  messageLimit?: number;
}

/** Slack truncates a message's text past this many characters (Slack Web API docs). */
const slackHardLimit = 40_000;

/** @slack/web-api, loaded only where Slack is used (load-on-first-use.ts says why). */
const loadSlackWebClient = loadOnFirstUse(() => import('./slack-web-client.ts'));

/**
 * A WebClient that never retries on its own: the worker's deliverer owns the
 * retry policy (429: the platform's Retry-After; 5xx: backoff, then failed), so a 429 must surface at once as RATE_LIMITED
 * with its Retry-After instead of being slept through inside the SDK. Async: the SDK loads on the first call.
 */
export async function createSlackClient(options: SlackClientOptions): Promise<WebClient> {
  return (await loadSlackWebClient()).createWebClient(options);
}

export function createSlackSender(options: SlackSenderOptions): PlatformSender {
  const shape: SenderShape = {
    platform: 'slack',
    // Chunks are split as Markdown (an entity or a link is never cut in two, and stored text stays as the model wrote it);
    // the cap keeps the escaped worst case under the hard limit, and 4,000 counts what the reader sees.
    messageLimit: Math.min(options.messageLimit ?? 4000, Math.floor(slackHardLimit / slackEscapeGrowth)),
    fitsOneMessage: (text) => renderSlackMrkdwn(text).length <= slackHardLimit,
    // Bots have no typing indicator in the Web API; 0 tells the worker not to try.
    typingIntervalMs: 0,
  };
  return deferSender(shape, async () => (await loadSlackWebClient()).createSlackWebSender(options, shape));
}

/**
 * Answers a button press through its `response_url` (Slack interactivity docs):
 * `replace` rewrites the message the button was on (the buttons go), else an
 * ephemeral line only the presser sees. Valid 30 minutes, five uses. Plain
 * fetch: it needs no SDK.
 */
export async function respondToSlackAction(responseUrl: string, answer: { text: string; replace: boolean }, timeoutMs = 3000): Promise<void> {
  let response: Response;
  try {
    response = await fetch(responseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(answer.replace ? { replace_original: true, text: escapeSlackText(answer.text) } : { response_type: 'ephemeral', replace_original: false, text: escapeSlackText(answer.text) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new PlatformError('UNAVAILABLE', 'slack response_url: network error', { cause: error });
  }
  if (!response.ok) throw new PlatformError(response.status >= 500 ? 'UNAVAILABLE' : 'REJECTED', `slack response_url: HTTP ${response.status}`);
}

/** `auth.test`: who the token belongs to, so the gateway can ignore the bot's own messages. */
export async function fetchSlackAuthInfo(client: WebClient): Promise<SlackAuthInfo> {
  return (await loadSlackWebClient()).fetchAuthInfo(client);
}
