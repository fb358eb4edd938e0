import type { Database } from '../client.ts';

/**
 * How long one step of a stream (a post or an edit) holds its row at most.
 * Released as soon as the platform answers; the cap only matters for a
 * worker that is alive but never finished the call, and is above the
 * senders' own request timeouts with their retries.
 */
export const streamStepClaimMs = 60_000;

/**
 * A stream step's hold on the conversation's growing message: `claimed`
 * (this turn may post or edit now), `busy` (another holding is posting or
 * editing it this instant: try again shortly) or `stale` (this turn no longer
 * owns the message: another turn took it over, committed it, or this turn is
 * no longer running — never post or edit again).
 */
export type StreamClaim = { kind: 'claimed'; outboxId: number; platformMessageId: string | null } | { kind: 'busy' } | { kind: 'stale' };

export interface StreamStepInput {
  conversationId: number;
  turnId: number;
  /** The lease holding (outboxClaimId): a step is claimed by it and released after the platform answered. */
  claimId: string;
  /** A claim of a worker silent this long is void (it was declared dead). */
  deadAfterMs: number;
}

/**
 * Gives a running turn the conversation's growing message (docs/turns.md
 * "Streaming replies") and claims it for the first step, written before
 * anything is posted so that the outbox, not the worker's memory, owns the
 * message: one `streaming` row per conversation (a partial unique index). A
 * row a cut-off or superseded turn left is taken over, with the message it
 * posted, so a resumed turn edits that message and never posts the reply a
 * second time — but only between that turn's steps: while its post or edit
 * is in flight (its claim is live and its worker alive) the answer is
 * `busy`, so no two holdings ever edit one message at once. Fenced: only a
 * turn still running gets it (`stale` otherwise).
 */
export async function openReplyStream(db: Database, input: StreamStepInput & { platform: string; target: Record<string, unknown> }): Promise<StreamClaim> {
  const [row] = await db.$client<{ opened: { id: string; platform_message_id: string | null } | null; running: boolean }[]>`
    with opened as (
      insert into outbox (conversation_id, turn_id, platform, target, chunk_index, text, status, streamed, claimed_by, claimed_until)
      select ${input.conversationId}, ${input.turnId}, ${input.platform}, ${JSON.stringify(input.target)}::jsonb, 0, '', 'streaming', true,
        ${input.claimId}, now() + ${streamStepClaimMs}::int * interval '1 millisecond'
      where exists (select 1 from turns where id = ${input.turnId} and status = 'running')
      on conflict (conversation_id) where status = 'streaming'
      do update set turn_id = excluded.turn_id, claimed_by = excluded.claimed_by, claimed_until = excluded.claimed_until
      where outbox.claimed_by is null or outbox.claimed_by = excluded.claimed_by or outbox.claimed_until < now()
        or not exists (
          select 1 from workers w where w.id = split_part(outbox.claimed_by, '#', 1) and w.status in ('running', 'stopping')
            and w.heartbeat_at >= now() - ${input.deadAfterMs}::int * interval '1 millisecond')
      returning id, platform_message_id
    )
    select (select row_to_json(opened) from opened) as opened,
      exists (select 1 from turns where id = ${input.turnId} and status = 'running') as running`;
  if (row?.opened) return { kind: 'claimed', outboxId: Number(row.opened.id), platformMessageId: row.opened.platform_message_id };
  return row?.running ? { kind: 'busy' } : { kind: 'stale' };
}

/**
 * Claims the turn's own growing message for one more edit: only while the
 * row is still `streaming`, still this turn's, and the turn still running.
 * Anything else (a takeover, a commit, the turn superseded or cut off) is
 * `stale`, and the stream stops for good.
 */
export async function claimStreamStep(db: Database, input: StreamStepInput & { outboxId: number }): Promise<StreamClaim> {
  const [row] = await db.$client<{ platform_message_id: string | null }[]>`
    update outbox set claimed_by = ${input.claimId}, claimed_until = now() + ${streamStepClaimMs}::int * interval '1 millisecond'
    where id = ${input.outboxId} and status = 'streaming' and turn_id = ${input.turnId}
      and exists (select 1 from turns where id = ${input.turnId} and status = 'running')
    returning platform_message_id`;
  return row ? { kind: 'claimed', outboxId: input.outboxId, platformMessageId: row.platform_message_id } : { kind: 'stale' };
}

/**
 * Ends a step: the message is free for a takeover or for the delivery of a
 * committed reply (which waits while a step is claimed, so the final edit
 * always lands after the last streamed one). Whatever the row became since.
 */
export async function releaseStreamStep(db: Database, outboxId: number, claimId: string): Promise<void> {
  await db.$client`update outbox set claimed_by = null, claimed_until = null where id = ${outboxId} and claimed_by = ${claimId}`;
}

/** Records the message the stream posted, right after the post: from here on every retry edits it instead of posting again. */
export async function recordStreamMessage(db: Database, outboxId: number, platformMessageId: string): Promise<void> {
  await db.$client`update outbox set platform_message_id = ${platformMessageId} where id = ${outboxId} and platform_message_id is null`;
}
