import { setTimeout as sleep } from 'node:timers/promises';
import type postgres from 'postgres';
import { Redis } from 'ioredis';
import { apiOnlyNotes } from '@switchboard/core';
import { createTurnQueue } from '@switchboard/queue';
import type { ConversationRun } from '../conversation-runner.ts';
import { checkSentOrder, type StoredUserLine } from './sent-order-check.ts';

/**
 * The end-of-run checks against what Postgres and Redis hold, over every
 * conversation of the run's throwaway database. Each returns violations as
 * short lines; an empty list means the promise held.
 */

export interface StoreChecks {
  conversations: number;
  /** Sessions started by a compression. */
  compressions: number;
  /** A human line stored twice, missing, or out of arrival order. */
  userLines: string[];
  /** A human line stored after a line the user sent later. */
  sentOrder: string[];
  /** A session with two children: the transcript forked. */
  forks: string[];
  apiOnlyText: string[];
  suspended: string[];
  stuckTurns: string[];
  strandedInput: string[];
  undeliveredOutbox: string[];
  queues: string[];
}

interface UserRow {
  conversation_id: number;
  session_id: number;
  inbound_event_id: number | null;
  created_at: Date;
}

interface EventRow {
  conversation_id: number;
  id: number;
  status: string;
}

/**
 * Waits until the system is idle (no running turn, no pending input or
 * outbox row, no queued job) or `timeoutMs` passes; returns how long it took.
 * The checks then judge whatever is left.
 */
export async function waitForQuiet(sql: postgres.Sql, redisUrl: string, redisPrefix: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const [row] = await sql<{ busy: number }[]>`
      select (select count(*) from turns where status = 'running')
           + (select count(*) from inbound_events where status in ('pending', 'held'))
           + (select count(*) from outbox where status = 'pending') as busy`.catch(() => [{ busy: 1 }]);
    if (Number(row?.busy ?? 1) === 0 && (await readQueueBacklog(redisUrl, redisPrefix)).length === 0) break;
    await sleep(250);
  }
  return Date.now() - started;
}

export async function checkStore(sql: postgres.Sql, redisUrl: string, redisPrefix: string, runs: ConversationRun[]): Promise<StoreChecks> {
  const [[count], users, lines, events, sessions, apiOnly, suspended, running, outbox] = await Promise.all([
    sql<{ n: number; compressions: number }[]>`
      select (select count(*)::int from conversations) as n, (select count(*)::int from sessions where parent_session_id is not null) as compressions`,
    sql<UserRow[]>`
      select s.conversation_id::int as conversation_id, m.session_id::int as session_id, m.inbound_event_id::int as inbound_event_id, m.created_at
      from messages m join sessions s on s.id = m.session_id where m.role = 'user' order by s.conversation_id, s.id, m.seq`,
    sql<StoredUserLine[]>`
      select c.platform, c.chat_id as "chatId", m.session_id::int as "sessionId", m.inbound_event_id::int as "inboundEventId", m.created_at as "createdAt", m.content
      from messages m join sessions s on s.id = m.session_id join conversations c on c.id = s.conversation_id
      where m.role = 'user' order by s.conversation_id, s.id, m.seq`,
    sql<EventRow[]>`select conversation_id::int as conversation_id, id::int as id, status from inbound_events order by conversation_id, id`,
    sql<{ parent: number; children: number }[]>`
      select parent_session_id::int as parent, count(*)::int as children from sessions
      where parent_session_id is not null group by parent_session_id having count(*) > 1`,
    sql<{ session_id: number; seq: number }[]>`
      select session_id::int as session_id, seq from messages where content like any(${sql.array(apiOnlyPatterns())})`,
    sql<{ id: number; reason: string | null }[]>`select id::int as id, suspend_reason as reason from conversations where status = 'suspended'`,
    sql<{ id: number; conversation_id: number }[]>`select id::int as id, conversation_id::int as conversation_id from turns where status = 'running'`,
    sql<{ id: number; status: string }[]>`select id::int as id, status from outbox where status <> 'sent'`,
  ]);
  return {
    conversations: count?.n ?? 0,
    compressions: count?.compressions ?? 0,
    userLines: checkUserLines(users, events),
    sentOrder: checkSentOrder(runs, lines),
    forks: sessions.map((s) => `session ${s.parent} has ${s.children} child sessions`),
    apiOnlyText: apiOnly.map((m) => `session ${m.session_id} seq ${m.seq} stores API-only text`),
    suspended: suspended.map((c) => `conversation ${c.id} suspended (${c.reason ?? 'no reason'})`),
    stuckTurns: running.map((t) => `turn ${t.id} of conversation ${t.conversation_id} still running`),
    strandedInput: events.filter((e) => e.status === 'pending' || e.status === 'held').map((e) => `inbound event ${e.id} of conversation ${e.conversation_id} still ${e.status}`),
    undeliveredOutbox: outbox.map((o) => `outbox row ${o.id} is ${o.status}`),
    queues: await readQueueBacklog(redisUrl, redisPrefix),
  };
}

/** Both notes share their opening words; stored text must never hold them (docs/turns.md, API-only context). */
function apiOnlyPatterns(): string[] {
  const openings = Object.values(apiOnlyNotes).map((note) => note.slice(0, note.indexOf(':') + 1));
  return [...new Set(openings)].map((opening) => `%${opening.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
}

/**
 * Every accepted inbound event is one stored user message, in event order.
 * A compression copies the kept tail into the child session with its event
 * id and timestamp (docs/compression.md); such a copy is the same message,
 * while two rows for one event in one session are a double commit.
 */
export function checkUserLines(users: UserRow[], events: EventRow[]): string[] {
  const problems: string[] = [];
  const storedBy = groupBy(users, (u) => u.conversation_id);
  const acceptedBy = groupBy(
    events.filter((e) => e.status === 'done'),
    (e) => e.conversation_id,
  );
  for (const [conversationId, accepted] of acceptedBy) {
    const firstSession = new Map<string, number>();
    const stored: number[] = [];
    for (const row of storedBy.get(conversationId) ?? []) {
      const key = `${row.inbound_event_id}:${row.created_at.getTime()}`;
      const seenIn = firstSession.get(key);
      if (seenIn !== undefined && seenIn !== row.session_id) continue;
      firstSession.set(key, row.session_id);
      if (row.inbound_event_id !== null) stored.push(row.inbound_event_id);
    }
    const expected = accepted.map((e) => e.id);
    if (stored.join(',') !== expected.join(',')) {
      const twice = stored.filter((id, i) => stored.indexOf(id) !== i);
      const missing = expected.filter((id) => !stored.includes(id));
      problems.push(`conversation ${conversationId}: ${twice.length} stored twice [${twice.slice(0, 5).join(',')}], ${missing.length} missing [${missing.slice(0, 5).join(',')}]${twice.length + missing.length === 0 ? ', out of order' : ''}`);
    }
  }
  return problems;
}

function groupBy<T>(rows: T[], key: (row: T) => number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const row of rows) {
    const list = groups.get(key(row)) ?? [];
    list.push(row);
    groups.set(key(row), list);
  }
  return groups;
}

/** Jobs still waiting, running or delayed in the turn queue. */
async function readQueueBacklog(redisUrl: string, redisPrefix: string): Promise<string[]> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
  connection.on('error', () => undefined);
  const queue = createTurnQueue(connection, redisPrefix);
  try {
    const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'waiting-children');
    return Object.entries(counts)
      .filter(([, n]) => n > 0)
      .map(([state, n]) => `${n} job(s) ${state} in the turn queue`);
  } catch (error) {
    return [`queue not readable: ${error instanceof Error ? error.message : String(error)}`];
  } finally {
    await queue.close().catch(() => undefined);
    connection.disconnect();
  }
}
