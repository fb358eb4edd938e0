import type { StoredAttachment } from '../schema/inbound-events.ts';
import type { Database } from '../client.ts';

export interface InboundToStore {
  platform: string;
  accountId: string;
  eventId: string;
  conversationKey: string;
  chatId: string;
  threadId: string;
  userScope: string;
  userId: string;
  text: string;
  /**
   * The chat command the text is, parsed once at ingress (core's storedCommandOf: a name, `busy:<mode>`, or `text`
   * for ordinary text), so nothing downstream parses it again. Null or absent: never parsed (the worker parses it).
   */
  command?: string | null;
  replyTarget: Record<string, unknown>;
  /** The message's files as references (docs/media.md); absent or empty: none. */
  attachments?: readonly StoredAttachment[];
  /**
   * Refuse (store as `refused`, never run) when this many events already wait;
   * null for input that must never be refused, such as /stop.
   */
  refuseAtPending: number | null;
  /** `done`: stored only for dedupe and the record, never run (an approval answer, decided where it arrives). */
  storeAs?: 'done';
}

/**
 * Store only if Postgres runs the statement before `notAfterMs` (epoch ms):
 * the platform's own wait for an answer, less a margin. A store that would
 * land after the platform gave up (and may have retried, or the user moved on
 * to the next message) is refused instead, so a late store can never put a
 * line behind one the user sent after it (docs/guarantees.md, "Order").
 */
export interface StoreDeadline {
  notAfterMs: number;
}

type Status = 'pending' | 'done' | 'refused';

/** The event was not stored: its deadline had passed when the statement ran (and it was not stored before). */
export interface TooLateInbound {
  tooLate: true;
}

export interface StoredInbound {
  tooLate?: false;
  inboundEventId: number;
  conversationId: number;
  /** True when this platform event id was stored before (a re-delivery). */
  duplicate: boolean;
  /** 'pending' until a turn has taken the event; 'refused' when over the queued-input cap. */
  status: Status;
}

/**
 * Upserts the conversation and stores the event in ONE round trip, since this
 * runs inside every webhook before the platform gets its ack. The trailing
 * SELECT sees the pre-statement snapshot, so on a re-delivery it returns the
 * row stored earlier and on a first delivery it returns nothing from it.
 */
export function storeInboundEvent(db: Database, event: InboundToStore): Promise<StoredInbound>;
export function storeInboundEvent(db: Database, event: InboundToStore, deadline: StoreDeadline | undefined): Promise<StoredInbound | TooLateInbound>;
export async function storeInboundEvent(db: Database, event: InboundToStore, deadline?: StoreDeadline): Promise<StoredInbound | TooLateInbound> {
  const notAfter = deadline === undefined ? null : new Date(deadline.notAfterMs).toISOString();
  const rows = await db.$client<{ id: string; conversation_id: string; duplicate: boolean; status: Status }[]>`
    with gate as (
      -- clock_timestamp(), not now(): the time the statement runs, after any lock it waited for.
      select ${notAfter}::timestamptz is null or clock_timestamp() <= ${notAfter}::timestamptz as open
    ), conv as (
      insert into conversations (key, platform, account_id, chat_id, thread_id, user_scope)
      select ${event.conversationKey}, ${event.platform}, ${event.accountId}, ${event.chatId}, ${event.threadId}, ${event.userScope}
      where (select open from gate)
      on conflict (key) do update set updated_at = now()
      returning id
    ), waiting as (
      select count(*)::int as n from inbound_events
      where conversation_id = (select id from conv) and status = 'pending'
    ), ins as (
      insert into inbound_events (platform, account_id, event_id, conversation_id, user_id, text, command, reply_target, attachments, status)
      select ${event.platform}, ${event.accountId}, ${event.eventId}, conv.id, ${event.userId}, ${event.text}, ${event.command ?? null}, ${JSON.stringify(event.replyTarget)}::jsonb,
        ${event.attachments && event.attachments.length > 0 ? JSON.stringify(event.attachments) : null}::jsonb,
        case when ${event.storeAs ?? null}::text = 'done' then 'done'
          when ${event.refuseAtPending}::int is not null and (select n from waiting) >= ${event.refuseAtPending}::int then 'refused' else 'pending' end
      from conv
      on conflict (platform, account_id, event_id) do nothing
      returning id, conversation_id, status
    )
    select id, conversation_id, false as duplicate, status from ins
    union all
    select id, conversation_id, true as duplicate, status from inbound_events
    where platform = ${event.platform} and account_id = ${event.accountId} and event_id = ${event.eventId}
      and not exists (select 1 from ins)`;
  // Two deliveries of one event racing each other: the loser's statement
  // snapshot predates the winner's commit, so it must look again.
  const row =
    rows[0] ??
    (
      await db.$client<{ id: string; conversation_id: string; duplicate: boolean; status: Status }[]>`
        select id, conversation_id, true as duplicate, status from inbound_events
        where platform = ${event.platform} and account_id = ${event.accountId} and event_id = ${event.eventId}`
    )[0];
  if (!row && notAfter !== null) return { tooLate: true };
  if (!row) throw new Error('storeInboundEvent stored nothing and found nothing');
  return { inboundEventId: Number(row.id), conversationId: Number(row.conversation_id), duplicate: row.duplicate, status: row.status };
}
