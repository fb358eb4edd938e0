import { parseScheduleCancelPayload, scheduleCancelText } from '@switchboard/core';
import { z } from 'zod';
import { PlatformError } from '../errors.ts';
import { normaliseInbound } from '../normalise-inbound.ts';
import type { ParseResult } from '../types.ts';

// block_actions (Slack interactivity docs, "block_actions payloads"): only what answering a button needs.
const blockActionsSchema = z
  .object({
    type: z.literal('block_actions'),
    user: z.object({ id: z.string().min(1), team_id: z.string().min(1).optional() }).passthrough(),
    team: z.object({ id: z.string().min(1) }).passthrough().nullable().optional(),
    response_url: z.string().url().optional(),
    trigger_id: z.string().min(1).optional(),
    channel: z.object({ id: z.string().min(1) }).passthrough().optional(),
    message: z.object({ ts: z.string().min(1), thread_ts: z.string().min(1).optional() }).passthrough().optional(),
    actions: z
      .array(z.object({ type: z.string(), action_id: z.string(), value: z.string().optional(), action_ts: z.string().optional() }).passthrough())
      .min(1),
  })
  .passthrough();
type BlockActions = z.infer<typeof blockActionsSchema>;

/**
 * The `payload` of an interactivity request (a form field holding JSON) → a
 * button press, or the reason it is ignored (another interaction type: a
 * shortcut, a modal, a select menu). Throws PlatformError INVALID_PAYLOAD for
 * something that is not an interaction payload at all.
 */
export function parseSlackInteraction(payloadJson: string): ParseResult {
  let payload: unknown;
  try {
    payload = JSON.parse(payloadJson);
  } catch {
    throw new PlatformError('INVALID_PAYLOAD', 'slack interaction: payload is not JSON');
  }
  if (typeof payload !== 'object' || payload === null || typeof (payload as { type?: unknown }).type !== 'string') {
    throw new PlatformError('INVALID_PAYLOAD', 'slack interaction: payload without a type');
  }
  if ((payload as { type: string }).type !== 'block_actions') return { kind: 'ignored', reason: `interaction_${(payload as { type: string }).type}` };
  const parsed = blockActionsSchema.safeParse(payload);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new PlatformError('INVALID_PAYLOAD', `slack block_actions: ${first?.path.join('.') || 'payload'} ${first?.message ?? ''}`.trim());
  }
  const { user, team, actions, response_url: responseUrl } = parsed.data;
  const action = actions[0];
  if (action?.type !== 'button' || action.value === undefined) return { kind: 'ignored', reason: 'not_a_button' };
  const teamId = team?.id ?? user.team_id;
  if (!teamId) throw new PlatformError('INVALID_PAYLOAD', 'slack block_actions: no team');
  const cancelId = parseScheduleCancelPayload(action.value);
  if (cancelId !== null) return pressAsCommand(parsed.data, { teamId, text: scheduleCancelText(cancelId), actionTs: action.action_ts });
  return {
    kind: 'button',
    press: { platform: 'slack', accountId: teamId, userId: user.id, payload: action.value, answer: responseUrl ? { responseUrl } : {} },
  };
}

/**
 * A Cancel button under a `/schedules` list (docs/schedules.md, "In chat"):
 * the typed command it stands for, from the presser, in the channel and
 * thread the list was posted in, so it is admitted, stored, deduplicated and
 * run like `!schedules cancel <id>` typed there. The list is the bot's own
 * reply: in a channel it sits in the thread the conversation is keyed by
 * (its thread_ts), in a DM at the top level.
 */
function pressAsCommand(data: BlockActions, press: { teamId: string; text: string; actionTs: string | undefined }): ParseResult {
  const { channel, message, user, trigger_id: triggerId } = data;
  const pressId = triggerId ?? press.actionTs;
  if (!channel || !message || !pressId) return { kind: 'ignored', reason: 'press_without_message' };
  // Channel ids of DMs start with D (block_actions names no channel_type).
  const isDirect = channel.id.startsWith('D');
  const threadTs = message.thread_ts;
  return {
    kind: 'message',
    message: normaliseInbound({
      platform: 'slack',
      eventId: `press:${pressId}`,
      userId: user.id,
      text: press.text,
      address: { platform: 'slack', accountId: press.teamId, chatId: channel.id, threadId: threadTs ?? '', userScope: isDirect ? '' : user.id },
      replyTarget: { channel: channel.id, ...(threadTs !== undefined ? { threadTs } : {}) },
    }),
  };
}
