import { z } from 'zod';
import { PlatformError } from '../errors.ts';
import type { ParseResult } from '../types.ts';

// block_actions (Slack interactivity docs, "block_actions payloads"): only what answering a button needs.
const blockActionsSchema = z
  .object({
    type: z.literal('block_actions'),
    user: z.object({ id: z.string().min(1), team_id: z.string().min(1).optional() }).passthrough(),
    team: z.object({ id: z.string().min(1) }).passthrough().nullable().optional(),
    response_url: z.string().url().optional(),
    actions: z
      .array(z.object({ type: z.string(), action_id: z.string(), value: z.string().optional() }).passthrough())
      .min(1),
  })
  .passthrough();

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
  return {
    kind: 'button',
    press: { platform: 'slack', accountId: teamId, userId: user.id, payload: action.value, answer: responseUrl ? { responseUrl } : {} },
  };
}
