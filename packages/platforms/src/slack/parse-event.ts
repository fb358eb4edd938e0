import { normaliseText, type InboundAttachment } from '@switchboard/core';
import { z } from 'zod';
import { PlatformError } from '../errors.ts';
import { normaliseInbound } from '../normalise-inbound.ts';
import type { ParseResult } from '../types.ts';

export interface SlackParseContext {
  /** The bot's own user id (`auth.test` user_id): its messages are never input. */
  botUserId?: string;
  /** The bot's bot id (`auth.test` bot_id). */
  botId?: string;
}

/** Where a Slack reply goes; stored as the inbound event's reply target and read back by the sender. */
export interface SlackReplyTarget {
  channel: string;
  /** The thread root's ts; absent = post at the top level (a DM outside any thread). */
  threadTs?: string;
  /** The user's message's ts, for the bot's status reaction on it. */
  messageTs?: string;
}

const authorizationSchema = z.object({ user_id: z.string().optional(), is_bot: z.boolean().optional() }).passthrough();
const envelopeSchema = z.object({ type: z.string().min(1) }).passthrough();
const callbackSchema = z
  .object({
    type: z.literal('event_callback'),
    team_id: z.string().min(1),
    event_id: z.string().min(1),
    event: z.object({ type: z.string().min(1) }).passthrough(),
    authorizations: z.array(authorizationSchema).optional(),
  })
  .passthrough();
// Loose on purpose: edits and deletions have no top-level user or text, and are ignored before the strict check.
const eventHeadSchema = z
  .object({
    type: z.string(),
    subtype: z.string().optional(),
    bot_id: z.string().nullable().optional(),
    user: z.string().optional(),
  })
  .passthrough();
const messageEventSchema = z
  .object({
    channel: z.string().min(1),
    user: z.string().min(1),
    text: z.string().optional(),
    ts: z.string().min(1),
    thread_ts: z.string().min(1).optional(),
    channel_type: z.string().optional(),
    // Slack's file object; a file the workspace hides (mode "tombstone", "hidden_by_limit") carries no usable fields.
    files: z
      .array(z.object({ id: z.string().min(1), name: z.string().nullable().optional(), mimetype: z.string().optional(), size: z.number().int().nonnegative().optional(), mode: z.string().optional() }).passthrough())
      .optional()
      // An unexpected file object drops the files, never the message (a 400 would make Slack retry it).
      .catch(undefined),
  })
  .passthrough();

/** `file_share`: a message with files (Slack Events API); it is input like a plain message. */
const inputSubtypes = new Set(['file_share']);

/** Envelope types Slack documents that carry no user input. */
const quietEnvelopes = new Set(['url_verification', 'app_rate_limited']);

/**
 * Slack Events API body → normalised inbound message, or why it is ignored
 * (Slack Events API docs). DMs come as `message` with `channel_type:"im"`;
 * channels only through `app_mention`, so a mention is never seen twice.
 * Throws PlatformError INVALID_PAYLOAD for something that is not an envelope.
 */
export function parseSlackEvent(body: unknown, context: SlackParseContext): ParseResult {
  const envelope = envelopeSchema.safeParse(body);
  if (!envelope.success) throw invalid('not a Slack Events API body', envelope.error);
  if (quietEnvelopes.has(envelope.data.type)) return { kind: 'ignored', reason: envelope.data.type };
  const parsed = callbackSchema.safeParse(body);
  if (!parsed.success) throw invalid('not a Slack event_callback', parsed.error);
  const { team_id: teamId, event_id: eventId, event: rawEvent, authorizations } = parsed.data;

  if (rawEvent.type !== 'message' && rawEvent.type !== 'app_mention') return { kind: 'ignored', reason: 'unsupported_event' };
  const head = eventHeadSchema.safeParse(rawEvent);
  if (!head.success) throw invalid(`malformed ${rawEvent.type} event`, head.error);
  // Bots (ourselves included) post with bot_id, with or without subtype bot_message.
  if (head.data.bot_id) return { kind: 'ignored', reason: 'bot_author' };
  if (head.data.subtype !== undefined && !inputSubtypes.has(head.data.subtype)) return { kind: 'ignored', reason: 'unsupported_subtype' };
  const botUserId = context.botUserId ?? authorizations?.find((entry) => entry.is_bot)?.user_id;
  if (head.data.user !== undefined && head.data.user === botUserId) return { kind: 'ignored', reason: 'self' };

  const checked = messageEventSchema.safeParse(rawEvent);
  if (!checked.success) throw invalid(`malformed ${rawEvent.type} event`, checked.error);
  const event = checked.data;
  const isDirect = rawEvent.type === 'message' && isDirectMessage(event.channel_type, event.channel);
  // Channel messages that mention the bot also arrive as app_mention; answering both would answer twice.
  if (rawEvent.type === 'message' && !isDirect) return { kind: 'ignored', reason: 'not_addressed' };
  const attachments = attachmentsOf(event.files ?? []);
  if ((event.text === undefined || normaliseText(event.text).trim() === '') && attachments.length === 0) return { kind: 'ignored', reason: 'no_text' };

  // A reply to a top-level mention opens a thread under it, so the mention's ts is that thread's root.
  const threadTs = event.thread_ts ?? (isDirect ? undefined : event.ts);
  const replyTarget: SlackReplyTarget = { channel: event.channel, ...(threadTs !== undefined ? { threadTs } : {}), messageTs: event.ts };
  return {
    kind: 'message',
    message: normaliseInbound({
      platform: 'slack',
      eventId,
      userId: event.user,
      text: event.text ?? '',
      ...(attachments.length > 0 ? { attachments } : {}),
      address: { platform: 'slack', accountId: teamId, chatId: event.channel, threadId: threadTs ?? '', userScope: isDirect ? '' : event.user },
      replyTarget: { ...replyTarget },
    }),
  };
}

/** Files as references: the worker asks files.info for each one's private URL (docs/media.md). */
function attachmentsOf(files: readonly { id: string; name?: string | null; mimetype?: string; size?: number; mode?: string }[]): InboundAttachment[] {
  return files
    .filter((file) => file.mode !== 'tombstone' && file.mode !== 'hidden_by_limit')
    .map((file) => {
      const mime = file.mimetype ?? null;
      const kind = mime?.startsWith('image/') ? 'image' : mime?.startsWith('audio/') ? 'audio' : 'document';
      return { kind, ref: file.id, mime, name: file.name ?? null, size: file.size ?? null };
    });
}

// Message events always name their channel_type; DM channel ids start with D should one ever lack it.
function isDirectMessage(channelType: string | undefined, channel: string): boolean {
  return channelType === undefined ? channel.startsWith('D') : channelType === 'im';
}

function invalid(what: string, error: z.ZodError): PlatformError {
  const first = error.issues[0];
  return new PlatformError('INVALID_PAYLOAD', `${what}: ${first?.path.join('.') || 'body'} ${first?.message ?? ''}`.trim());
}
