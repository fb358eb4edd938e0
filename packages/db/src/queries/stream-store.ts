import type { Database } from '../client.ts';
import { outboxClaimMs } from './outbox-store.ts';

export interface OpenReplyStream {
  /** The outbox row that owns the growing message; the turn's commit makes it the reply's first part. */
  outboxId: number;
  /** The message already posted for it: set when a resumed turn took over the one a cut-off turn left (then it is edited, not posted again). */
  platformMessageId: string | null;
}

/**
 * Gives a running turn the conversation's growing message (docs/turns.md
 * "Streaming replies"), written before anything is posted so that the
 * outbox, not the worker's memory, owns the message: one `streaming` row per
 * conversation (a partial unique index). A row a cut-off or superseded turn
 * left is taken over, with the message it posted, so a resumed turn edits
 * that message and never posts the reply a second time. Fenced: only a turn
 * still running gets one (undefined otherwise).
 */
export async function openReplyStream(
  db: Database,
  input: { conversationId: number; turnId: number; platform: string; target: Record<string, unknown>; claimFor: string },
): Promise<OpenReplyStream | undefined> {
  const [row] = await db.$client<{ id: string; platform_message_id: string | null }[]>`
    insert into outbox (conversation_id, turn_id, platform, target, chunk_index, text, status, streamed, claimed_by, claimed_until)
    select ${input.conversationId}, ${input.turnId}, ${input.platform}, ${JSON.stringify(input.target)}::jsonb, 0, '', 'streaming', true,
      ${input.claimFor}, now() + ${outboxClaimMs}::int * interval '1 millisecond'
    where exists (select 1 from turns where id = ${input.turnId} and status = 'running')
    on conflict (conversation_id) where status = 'streaming'
    do update set turn_id = excluded.turn_id, claimed_by = excluded.claimed_by, claimed_until = excluded.claimed_until
    returning id, platform_message_id`;
  return row ? { outboxId: Number(row.id), platformMessageId: row.platform_message_id } : undefined;
}

/** Records the message the stream posted, right after the post: from here on every retry edits it instead of posting again. */
export async function recordStreamMessage(db: Database, outboxId: number, platformMessageId: string): Promise<void> {
  await db.$client`update outbox set platform_message_id = ${platformMessageId} where id = ${outboxId} and platform_message_id is null`;
}
