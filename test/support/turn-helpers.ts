import { setTimeout as sleep } from 'node:timers/promises';
import { postJson, type SentTelegramMessage, type TestSystem } from './system.ts';

/**
 * Helpers for the busy-mode and turn-scenario end-to-end tests: the sim's
 * recorded model requests (awaited through its long-poll wait endpoint, never
 * by sleeping), what the user saw, and what Postgres holds for one chat.
 */

/** The start of the API-only recovery note (packages/core api-only-notes.ts). */
export const recoveryNotePrefix = 'Note from the chat gateway (not from the user): the previous turn was interrupted';
/** Any API-only note; none of them may ever be stored. */
export const apiOnlyMarker = 'Note from the chat gateway';
/** The gateway's overflow notice starts with this (apps/gateway/src/ingress/accept-inbound.ts). */
export const overflowNoticePrefix = 'You have sent more messages than I can keep up with';
/** The stored result of a tool call that did not finish (packages/agent transcript-entry.ts). */
export const cancelledResultPrefix = 'cancelled: ';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface ModelRequest {
  id: number;
  receivedAt: number;
  body: { messages: ChatMessage[] };
  stream: boolean;
  ruleIndex?: number;
  status?: number;
  finishedAt?: number;
  /** The sim wrote a 200 answer's headers (the client may or may not have read them before it aborted). */
  respondedAt?: number;
  abortedAt?: number;
}

export type RequestState = 'any' | 'finished' | 'aborted' | 'settled';

/** Text of the last user message of a request: what the scripted model answers to. */
export function lastUserText(request: ModelRequest): string {
  const users = request.body.messages.filter((m) => m.role === 'user');
  return users.at(-1)?.content ?? '';
}

export function userTexts(request: ModelRequest): string[] {
  return request.body.messages.filter((m) => m.role === 'user').map((m) => m.content ?? '');
}

/** Indexes of the recovery notes in a request. */
export function recoveryNoteIndexes(request: ModelRequest): number[] {
  return request.body.messages.flatMap((m, i) => (m.role === 'system' && (m.content ?? '').startsWith(recoveryNotePrefix) ? [i] : []));
}

/** Every request the model got so far, oldest first. */
export async function modelRequests(system: TestSystem): Promise<ModelRequest[]> {
  const response = await fetch(`${system.simUrl}/control/model/requests`);
  return (await response.json()) as ModelRequest[];
}

/** The requests of one test chat: every message text of chat N starts with `c<N>:`. */
export function requestsOfChat(requests: ModelRequest[], chatId: number): ModelRequest[] {
  const prefix = chatPrefix(chatId);
  return requests.filter((r) => lastUserText(r).startsWith(prefix));
}

export function chatPrefix(chatId: number): string {
  return `c${chatId}:`;
}

/**
 * Waits for a model request in `state` that satisfies `predicate`, on the
 * sim's long-poll `/control/model/wait`: each round asks for one more
 * matching request than it has seen, so it wakes on every new record.
 */
export async function waitForModelRequest(
  system: TestSystem,
  predicate: (request: ModelRequest) => boolean,
  options: { state?: RequestState; timeoutMs?: number; what?: string } = {},
): Promise<ModelRequest> {
  const state = options.state ?? 'any';
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  let count = 1;
  for (;;) {
    const remaining = deadline - Date.now();
    const response = await fetch(`${system.simUrl}/control/model/wait?count=${count}&state=${state}&timeout_ms=${Math.max(0, remaining)}`);
    const body = (await response.json()) as ModelRequest[] | { requests: ModelRequest[] };
    const records = Array.isArray(body) ? body : body.requests;
    const found = records.find(predicate);
    if (found) return found;
    if (!response.ok || Date.now() >= deadline) {
      throw new Error(`no ${state} model request ${options.what ?? 'matching the predicate'} within ${options.timeoutMs ?? 15_000} ms (${records.length} ${state} requests seen)`);
    }
    count = records.length + 1;
  }
}

/** Waits for the request whose last user message is exactly `text`. */
export function waitForRequestFor(system: TestSystem, text: string, state: RequestState = 'any', timeoutMs?: number): Promise<ModelRequest> {
  return waitForModelRequest(system, (r) => lastUserText(r) === text, { state, timeoutMs, what: `for ${JSON.stringify(text)}` });
}

export interface SendResult {
  status: number;
  outcome: 'accepted' | 'duplicate' | 'refused' | undefined;
}

/** Sends a Telegram message from the user of private chat `chatId`; returns the gateway's HTTP status and ingress outcome. */
export async function sendText(system: TestSystem, chatId: number, text: string): Promise<SendResult> {
  const answer = (await postJson(`${system.simUrl}/control/telegram/updates`, {
    chat: { id: chatId, type: 'private' },
    from: { id: chatId, first_name: 'Tester' },
    text,
  })) as { status: number; body: { outcome?: SendResult['outcome'] } | null };
  return { status: answer.status, outcome: answer.body?.outcome };
}

/** Everything the bot has sent to `chatId` so far, in order. */
/** A bot message as the simulator recorded it: its text now and every edit it had, with the time of each (ms). */
export interface ShownMessage extends SentTelegramMessage {
  edits?: { text: string; editedAt: number }[];
  /** Its buttons (an approval question's), until an edit removes them. */
  reply_markup?: unknown;
}

export async function sentTo(system: TestSystem, chatId: number): Promise<ShownMessage[]> {
  const response = await fetch(`${system.simUrl}/control/telegram/sent?chat_id=${chatId}`);
  return (await response.json()) as ShownMessage[];
}

export async function armTelegramFault(system: TestSystem, fault: { method: string; kind: 'delay' | '429' | '500'; delayMs?: number; times?: number }): Promise<void> {
  await postJson(`${system.simUrl}/control/telegram/faults`, fault);
}

/**
 * Polls Postgres for a condition (there is no event for "nothing left to
 * do"): a short interval and an overall deadline, never a fixed sleep.
 */
export async function waitForCondition(what: string, check: () => Promise<boolean>, timeoutMs = 30_000, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Waits until the chats have no pending input, no running turn and no pending outbox row. */
export async function waitForIdle(system: TestSystem, chatIds: number[], timeoutMs = 30_000): Promise<void> {
  const ids = chatIds.map(String);
  let last = '';
  try {
    await waitForCondition(
      `chats ${chatIds.join(', ')} to be idle`,
      async () => {
        const [row] = await system.sql<{ pending: number; running: number; outbox: number }[]>`
          select
            (select count(*)::int from inbound_events e join conversations c on c.id = e.conversation_id
              where c.chat_id in ${system.sql(ids)} and e.status = 'pending') as pending,
            (select count(*)::int from turns t join conversations c on c.id = t.conversation_id
              where c.chat_id in ${system.sql(ids)} and t.status = 'running') as running,
            (select count(*)::int from outbox o join conversations c on c.id = o.conversation_id
              where c.chat_id in ${system.sql(ids)} and o.status = 'pending') as outbox`;
        last = JSON.stringify(row);
        return row !== undefined && row.pending === 0 && row.running === 0 && row.outbox === 0;
      },
      timeoutMs,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; last state ${last}; ${await describeStuck(system, ids)}`);
  }
}

/** What a timed-out wait found still running or waiting, with its worker's health: the lead to a stuck turn. */
async function describeStuck(system: TestSystem, chatIds: string[]): Promise<string> {
  const rows = await system.sql<{ what: string }[]>`
    select format('chat %s turn %s running since %s on worker %s (%s, heartbeat %s ms ago)', c.chat_id, t.id, t.started_at, t.worker_id,
      coalesce(w.status, 'no row'), (extract(epoch from now() - w.heartbeat_at) * 1000)::int) as what
    from turns t join conversations c on c.id = t.conversation_id left join workers w on w.id = t.worker_id
    where c.chat_id in ${system.sql(chatIds)} and t.status = 'running'
    union all
    select format('chat %s outbox %s pending (claimed by %s until %s, attempts %s, streamed %s)', c.chat_id, o.id, o.claimed_by, o.claimed_until, o.attempts, o.streamed)
    from outbox o join conversations c on c.id = o.conversation_id
    where c.chat_id in ${system.sql(chatIds)} and o.status in ('pending', 'streaming')`;
  return rows.length === 0 ? 'nothing stuck' : rows.map((r) => r.what).join('; ');
}

export interface StoredMessage {
  session_id: number;
  seq: number;
  role: 'user' | 'assistant' | 'tool';
  /** 'summary': a compression's summary, seq 1 of a child session. */
  kind?: 'message' | 'summary';
  content: string;
  tool_calls: { id: string; name: string; arguments: string }[] | null;
  tool_call_id: string | null;
  tool_name: string | null;
  inbound_event_id: number | null;
  turn_id: number | null;
  created_at?: Date;
}

export interface StoredEvent {
  id: number;
  text: string;
  status: 'pending' | 'done' | 'refused';
  turn_id: number | null;
  received_at: Date;
}

export interface StoredTurn {
  id: number;
  status: string;
  error: string | null;
  started_at: Date;
  ended_at: Date | null;
  cut_off_at?: Date | null;
  worker_id?: string | null;
}

export interface StoredOutbox {
  id: number;
  text: string;
  status: string;
  turn_id: number | null;
  chunk_index?: number;
  /** A streamed message (docs/turns.md "Streaming replies"): delivery edited the message the stream posted. */
  streamed?: boolean;
  platform_message_id?: string | null;
  sent_at?: Date | null;
}

/** A session of the conversation (docs/compression.md "Words"), with its messages as stored. */
export interface StoredSession {
  id: number;
  parent_session_id: number | null;
  /** 'active', 'compressed' (a compression ended it) or 'finalized' (a reset or a suspension did). */
  status: string;
  /** The tool-tail key whose recovery note was acknowledged on it (docs/turns.md "The recovery note"). */
  recovery_ack_key: string | null;
  /** By seq: a child's summary (seq 1) and its copies of the kept messages included. */
  messages: StoredMessage[];
}

export interface ChatSnapshot {
  chatId: number;
  conversationId: number;
  busyMode: string | null;
  /** The current session's stored recovery acknowledgement (`sessions.recovery_ack_key`). */
  recoveryAckKey: string | null;
  /** `conversations.current_session_id`: where the current chain ends. */
  currentSessionId?: number | null;
  /** Every session of the conversation, by id, each with its stored messages (check (a) walks the chain). */
  sessions?: StoredSession[];
  /**
   * The summariser's requests over this chat's transcript, as the sim recorded
   * them (set by the test, not loaded): what each summary was written from.
   */
  summaries?: ModelRequest[];
  /** The conversation's own state (docs/restarts.md): 'active' or 'suspended', and its restart counter. */
  status?: string;
  restartCount?: number;
  /** The conversation's runtime setting: 'codex' for a Codex conversation (null: the worker's AGENT_RUNTIME, openai in the scenarios). */
  runtime?: string | null;
  /** The restart counter read while idle before the closing message (Postgres' clock), for check (l). */
  idleRestartCount?: { restartCount: number; at: Date };
  /**
   * Every session's messages, sessions in creation order, then by seq,
   * without the kept messages a compression copied into a child session
   * (each stored message once; the summary rows stay, kind 'summary').
   */
  messages: StoredMessage[];
  /** Inbound events in arrival (id) order. */
  events: StoredEvent[];
  /** Turns in id (start) order. */
  turns: StoredTurn[];
  outbox: StoredOutbox[];
}

/** What Postgres holds for one chat. */
export async function loadChat(system: TestSystem, chatId: number): Promise<ChatSnapshot> {
  const { sql } = system;
  const [conversation] = await sql<{ id: number; busy_mode: string | null; recovery_ack_key: string | null; status: string; restart_count: number; runtime: string | null; current_session_id: number | null }[]>`
    select c.id::int as id, c.busy_mode, s.recovery_ack_key, c.status, c.restart_count, c.runtime, c.current_session_id::int as current_session_id
    from conversations c left join sessions s on s.id = c.current_session_id
    where c.chat_id = ${String(chatId)}`;
  if (!conversation) throw new Error(`no conversation for chat ${chatId}`);
  const id = conversation.id;
  const [messages, events, turns, outbox, sessions] = await Promise.all([
    sql<StoredMessage[]>`
      select m.session_id::int as session_id, m.seq, m.role, m.kind, m.content, m.tool_calls, m.tool_call_id, m.tool_name,
        m.inbound_event_id::int as inbound_event_id, m.turn_id::int as turn_id, m.created_at
      from messages m join sessions s on s.id = m.session_id
      where s.conversation_id = ${id} order by s.id, m.seq`,
    sql<StoredEvent[]>`
      select id::int as id, text, status, turn_id::int as turn_id, received_at
      from inbound_events where conversation_id = ${id} order by id`,
    sql<StoredTurn[]>`
      select id::int as id, status, error, started_at, ended_at, cut_off_at, worker_id from turns where conversation_id = ${id} order by id`,
    sql<StoredOutbox[]>`
      select id::int as id, text, status, turn_id::int as turn_id, chunk_index, streamed, platform_message_id, sent_at from outbox where conversation_id = ${id} order by id`,
    sql<Omit<StoredSession, 'messages'>[]>`
      select id::int as id, parent_session_id::int as parent_session_id, status, recovery_ack_key from sessions where conversation_id = ${id} order by id`,
  ]);
  return {
    chatId,
    conversationId: id,
    busyMode: conversation.busy_mode,
    recoveryAckKey: conversation.recovery_ack_key,
    status: conversation.status,
    restartCount: conversation.restart_count,
    runtime: conversation.runtime,
    currentSessionId: conversation.current_session_id,
    sessions: sessions.map((session) => ({ ...session, messages: messages.filter((m) => m.session_id === session.id) })),
    messages: withoutCompressionCopies(messages),
    events,
    turns,
    outbox,
  };
}

/**
 * A compression copies the kept tail into the child session with its role,
 * ids and timestamp (docs/compression.md "The commit"), so the chain holds it
 * twice; the checks want each stored message once. A copy is a message of a
 * later session identical to one of an earlier session; a duplicate within
 * one session (a double commit) is kept, so check (a) still sees it.
 */
function withoutCompressionCopies(messages: StoredMessage[]): StoredMessage[] {
  const firstSession = new Map<string, number>();
  return messages.filter((m) => {
    const key = JSON.stringify([m.role, m.kind, m.content, m.tool_call_id, m.inbound_event_id, m.turn_id, m.created_at?.getTime()]);
    const seenIn = firstSession.get(key);
    if (seenIn === undefined) firstSession.set(key, m.session_id);
    return seenIn === undefined || seenIn === m.session_id;
  });
}

/** [role, content] pairs of the stored transcript, for compact assertions. */
export function transcript(snapshot: ChatSnapshot): [string, string][] {
  return snapshot.messages.map((m) => [m.role, m.content]);
}
