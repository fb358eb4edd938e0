import { z } from 'zod';
import { PlatformError } from '../errors.ts';
import type { SlackReplyTarget } from './parse-event.ts';

// A malformed optional field is dropped rather than refused: the message still reaches the channel, at the top level.
const slackReplyTargetSchema = z.object({
  channel: z.string().min(1),
  threadTs: z.string().optional().catch(undefined),
  messageTs: z.string().optional().catch(undefined),
});

/** The stored reply target read back (it is jsonb, so only its shape vouches for it); REJECTED without a channel. */
export function readSlackReplyTarget(target: Record<string, unknown>): SlackReplyTarget {
  const parsed = slackReplyTargetSchema.safeParse(target);
  if (!parsed.success) throw new PlatformError('REJECTED', 'slack reply target has no channel');
  const { channel, threadTs, messageTs } = parsed.data;
  return { channel, ...(threadTs ? { threadTs } : {}), ...(messageTs ? { messageTs } : {}) };
}
