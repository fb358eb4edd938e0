import { createHmac, randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { EventHub } from './event-hub.ts';
import type { SlackStore } from './slack-store.ts';
import { slackWorkspace, type SlackDeliveryAttempt, type SlackEvent, type SlackEventEnvelope, type SlackRetryReason } from './slack-types.ts';
import { describeFetchError, elapsed, parseAnswer } from './outbound-answer.ts';
import { PostTimeoutError, postToGateway, type GatewayPost } from './outbound-post.ts';

const tsPattern = /^\d+\.\d+$/;

export const slackEventInputSchema = z
  .object({
    /** Default: `message` in a DM, `app_mention` elsewhere. */
    type: z.enum(['message', 'app_mention']).optional(),
    channel: z.string().min(1),
    /** Default from the channel id: D… im, G… group, else channel. */
    channel_type: z.enum(['channel', 'group', 'im', 'mpim', 'app_home']).optional(),
    user: z.string().min(1),
    text: z.string(),
    thread_ts: z.string().regex(tsPattern, 'must look like 1700000000.000100').optional(),
    /** The message's ts (default: a new one); for message_changed / message_deleted, the ts of the message changed. */
    ts: z.string().regex(tsPattern, 'must look like 1700000000.000100').optional(),
    bot_id: z.string().min(1).optional(),
    subtype: z.string().min(1).optional(),
    /** Files by their sim id (POST /control/media/files): the message shares them, as Slack's `files` (subtype file_share in a DM). */
    files: z.array(z.string().min(1)).optional(),
    /** Reuse an event id to act out a duplicate delivery. */
    event_id: z.string().min(1).optional(),
    signing: z.enum(['valid', 'bad', 'stale', 'none']).default('valid'),
    /** Slack retries a failed or slow delivery up to 3 times; false sends once. */
    retryOnFailure: z.boolean().default(true),
    /** Act out one of Slack's retries: the first request already carries X-Slack-Retry-Num = retryNum. */
    retryNum: z.number().int().min(1).max(3).optional(),
    retryReason: z.enum(['http_error', 'http_timeout', 'connection_failed']).default('http_timeout'),
  })
  .strict();

export type SlackEventInput = z.infer<typeof slackEventInputSchema>;
export type SigningMode = SlackEventInput['signing'];

/** Slack's retries after the first attempt (Slack Events API docs); the sim sends them at once. */
const maxRetries = 3;
/** A stale request is this far in the past: past Slack's 5-minute window. */
const staleBySeconds = 6 * 60;

/** Builds the `event_callback` envelope Slack would POST for `input`; `ts` is the message's ts. */
export function buildEventEnvelope(store: SlackStore, input: SlackEventInput, files?: Record<string, unknown>[]): { envelope: SlackEventEnvelope; ts: string } {
  const channelType = input.channel_type ?? inferChannelType(input.channel);
  const type = input.type ?? (channelType === 'im' ? 'message' : 'app_mention');
  const eventTs = store.takeTs();
  const ts = input.ts ?? eventTs;
  const event = buildEvent(input, { type, channelType, ts, eventTs });
  if (files && files.length > 0) {
    Object.assign(event, { files, upload: false, display_as_bot: false });
    // A DM message that shares files comes as subtype file_share; an app_mention carries them without one.
    if (type === 'message' && input.subtype === undefined) Object.assign(event, { subtype: 'file_share' });
  }
  const envelope: SlackEventEnvelope = {
    token: slackWorkspace.verificationToken,
    team_id: slackWorkspace.teamId,
    api_app_id: slackWorkspace.appId,
    event,
    type: 'event_callback',
    event_id: input.event_id ?? store.takeEventId(),
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ enterprise_id: null, team_id: slackWorkspace.teamId, user_id: slackWorkspace.botUserId, is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
    event_context: `4-${Buffer.from(JSON.stringify({ et: type, tid: slackWorkspace.teamId, aid: slackWorkspace.appId, cid: input.channel })).toString('base64url')}`,
  };
  return { envelope, ts };
}

/** What the envelope already decided for the event: its type, channel type, the message's ts and the event's own ts. */
interface EventShape {
  type: 'message' | 'app_mention';
  channelType: string;
  ts: string;
  eventTs: string;
}

function buildEvent(input: SlackEventInput, shape: EventShape): SlackEvent {
  const { type, channelType, ts, eventTs } = shape;
  const { user, text, channel } = input;
  const thread = input.thread_ts !== undefined ? { thread_ts: input.thread_ts } : {};
  const bot = input.bot_id !== undefined ? { bot_id: input.bot_id, app_id: input.bot_id === slackWorkspace.botId ? slackWorkspace.appId : `A${input.bot_id.slice(1)}` } : {};
  // Edits and deletions describe another message: no top-level author or text, as on Slack.
  if (input.subtype === 'message_changed') {
    return {
      type: 'message',
      subtype: 'message_changed',
      hidden: true,
      channel,
      channel_type: channelType,
      ts: eventTs,
      event_ts: eventTs,
      message: { type: 'message', user, text, ts, ...thread, ...bot, edited: { user, ts: eventTs } },
      previous_message: { type: 'message', user, text: '', ts, ...thread },
    };
  }
  if (input.subtype === 'message_deleted') {
    return {
      type: 'message',
      subtype: 'message_deleted',
      hidden: true,
      channel,
      channel_type: channelType,
      ts: eventTs,
      event_ts: eventTs,
      deleted_ts: ts,
      previous_message: { type: 'message', user, text, ts, ...thread },
    };
  }
  // A classic bot_message names no user; a bot user's own post has both user and bot_id.
  const author = input.subtype === 'bot_message' ? { username: user } : { user };
  const clientMessage = input.bot_id === undefined && input.subtype === undefined ? { client_msg_id: randomUUID() } : {};
  return {
    type,
    ...(input.subtype !== undefined ? { subtype: input.subtype } : {}),
    ...author,
    ...bot,
    ...clientMessage,
    text,
    ts,
    ...thread,
    team: slackWorkspace.teamId,
    channel,
    event_ts: ts,
    ...(type === 'message' ? { channel_type: channelType } : {}),
  };
}

function inferChannelType(channel: string): string {
  if (channel.startsWith('D')) return 'im';
  if (channel.startsWith('G')) return 'group';
  return 'channel';
}

/** The headers Slack signs a request with: `v0=` HMAC-SHA256 over `v0:{timestamp}:{body}`. */
export function signSlackRequest(secret: string, body: string, mode: SigningMode, nowMs = Date.now()): Record<string, string> {
  if (mode === 'none') return {};
  const timestamp = String(Math.floor(nowMs / 1000) - (mode === 'stale' ? staleBySeconds : 0));
  const key = mode === 'bad' ? `${secret}-not-the-secret` : secret;
  const signature = `v0=${createHmac('sha256', key).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return { 'X-Slack-Request-Timestamp': timestamp, 'X-Slack-Signature': signature };
}

/** What a Request URL delivery reads its ack timeout from, records into and stops on. */
export interface DeliveryDeps {
  store: SlackStore;
  hub: EventHub;
  shutdown: AbortSignal;
}

export interface DeliveryOptions {
  url: string;
  secret: string;
  signing: SigningMode;
  retryOnFailure: boolean;
  /** Start as this retry of an earlier (unseen) attempt. */
  firstRetry?: { num: number; reason: SlackRetryReason };
  /** What the delivery was, for the event stream. */
  label: string;
}

/**
 * POSTs `body` to the Request URL as Slack does: signed afresh per attempt,
 * counted failed on a non-2xx answer, no answer, or no answer within the ack
 * timeout, then retried (at once, in the sim) with X-Slack-Retry-Num and
 * X-Slack-Retry-Reason, unless the answer says X-Slack-No-Retry: 1.
 */
export async function deliverToRequestUrl(deps: DeliveryDeps, body: string, options: DeliveryOptions): Promise<SlackDeliveryAttempt[]> {
  const { store, hub, shutdown } = deps;
  const attempts: SlackDeliveryAttempt[] = [];
  let reason: SlackRetryReason | undefined = options.firstRetry?.reason;
  for (let retryNum = options.firstRetry?.num ?? 0; retryNum <= maxRetries; retryNum++) {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
      ...signSlackRequest(options.secret, body, options.signing),
      ...(reason !== undefined ? { 'X-Slack-Retry-Num': String(retryNum), 'X-Slack-Retry-Reason': reason } : {}),
    };
    const { attempt, noRetry } = await postOnce({ url: options.url, headers, body }, store.ackTimeoutMs, shutdown);
    attempts.push({ ...attempt, retryNum, ...(reason !== undefined ? { retryReason: reason } : {}) });
    if (attempt.status >= 200 && attempt.status < 300) break;
    if (!options.retryOnFailure || noRetry || shutdown.aborted) break;
    reason = attempt.status !== 0 ? 'http_error' : attempt.error === 'timeout' ? 'http_timeout' : 'connection_failed';
  }
  hub.publish('slack.delivery', { what: options.label, attempts });
  return attempts;
}

async function postOnce(post: GatewayPost, timeoutMs: number, shutdown: AbortSignal): Promise<{ attempt: Omit<SlackDeliveryAttempt, 'retryNum'>; noRetry: boolean }> {
  const startedAt = performance.now();
  try {
    const answer = await postToGateway(post, timeoutMs, shutdown);
    return {
      attempt: { status: answer.status, body: parseAnswer(answer.text), ackMs: elapsed(startedAt) },
      noRetry: answer.headers['x-slack-no-retry'] === '1',
    };
  } catch (error) {
    const timedOut = error instanceof PostTimeoutError;
    return { attempt: { status: 0, body: null, ackMs: elapsed(startedAt), error: timedOut ? 'timeout' : describeFetchError(error) }, noRetry: false };
  }
}
