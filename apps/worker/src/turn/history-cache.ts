import { loadSessionMessages, type Database, type MessageRow } from '@switchboard/db';

export interface HistoryCache {
  /**
   * The session's messages in order. `lastSeq` is the session row's, read
   * before this call: rows up to it are returned, from memory where possible.
   * The array is shared: callers must not change it.
   */
  load(session: { id: number; lastSeq: number }): Promise<readonly MessageRow[]>;
  /**
   * Rows this worker just committed to the session: kept if they continue the
   * cached ones exactly, so the next turn reads nothing (ignored otherwise;
   * the next load reads what it lacks).
   */
  append(sessionId: number, rows: readonly MessageRow[]): void;
  /** Messages held. */
  readonly size: number;
  /** Their weight in bytes (messageBytes). */
  readonly bytes: number;
}

interface Entry {
  lastSeq: number;
  messages: MessageRow[];
  /** The entry's weight against `maxBytes` (messageBytes of each row). */
  bytes: number;
}

/** How much the cache may hold: messages over all sessions, and their approximate size in bytes. */
export interface HistoryCacheLimits {
  maxMessages: number;
  maxBytes: number;
}

/**
 * A row's weight: its text as V8 holds it (two bytes a character at most)
 * plus a fixed share for the row object. An estimate, and deliberately a
 * cheap one: it bounds what users' documents can pin in memory (issue 30,
 * finding 3), where a count of messages alone let 200,000 rows of 100,000
 * characters each stay cached.
 */
export function messageBytes(row: Pick<MessageRow, 'content'> & { toolCalls?: unknown }): number {
  return 2 * row.content.length + 256 + (row.toolCalls ? 2 * JSON.stringify(row.toolCalls).length : 0);
}

function bytesOf(rows: readonly MessageRow[]): number {
  let total = 0;
  for (const row of rows) total += messageBytes(row);
  return total;
}

/**
 * Keeps recent sessions' transcripts in worker memory, so a turn reads only
 * the messages stored since this worker last saw the session — not the whole
 * history (that made per-turn cost grow with the conversation's length).
 *
 * Safe without invalidation because a session's messages are append-only and
 * numbered: only the conversation's lease holder commits to it, compression
 * writes a new session instead of changing this one, and `seq` is gap-free.
 * If the rows read do not continue the cached ones exactly, the whole session
 * is read again. Bounded by message count and by bytes over all sessions,
 * least recently used first out, so memory stays flat however many
 * conversations, and however large their documents, pass through.
 */
export function createHistoryCache(db: Database, limits: HistoryCacheLimits): HistoryCache {
  const entries = new Map<number, Entry>();
  let cached = 0;
  let cachedBytes = 0;

  const forget = (sessionId: number, entry: Entry) => {
    entries.delete(sessionId);
    cached -= entry.messages.length;
    cachedBytes -= entry.bytes;
  };
  const remember = (sessionId: number, entry: Entry) => {
    entries.delete(sessionId);
    if (entry.messages.length > limits.maxMessages || entry.bytes > limits.maxBytes) return;
    entries.set(sessionId, entry);
    cached += entry.messages.length;
    cachedBytes += entry.bytes;
    for (const [id, oldest] of entries) {
      if (cached <= limits.maxMessages && cachedBytes <= limits.maxBytes) break;
      forget(id, oldest);
    }
  };

  return {
    get size() {
      return cached;
    },
    get bytes() {
      return cachedBytes;
    },
    append(sessionId, rows) {
      const entry = entries.get(sessionId);
      const first = rows[0];
      if (!entry || !first || first.seq !== entry.lastSeq + 1 || (rows.at(-1) as MessageRow).seq !== entry.lastSeq + rows.length) return;
      forget(sessionId, entry);
      remember(sessionId, { lastSeq: entry.lastSeq + rows.length, messages: [...entry.messages, ...rows], bytes: entry.bytes + bytesOf(rows) });
    },
    async load(session) {
      const entry = entries.get(session.id);
      if (entry) forget(session.id, entry);
      if (entry && entry.lastSeq === session.lastSeq) {
        remember(session.id, entry);
        return entry.messages;
      }
      if (entry && entry.lastSeq < session.lastSeq) {
        const added = await loadSessionMessages(db, session.id, entry.lastSeq);
        if (added[0]?.seq === entry.lastSeq + 1 && added.at(-1)?.seq === session.lastSeq && added.length === session.lastSeq - entry.lastSeq) {
          const messages = [...entry.messages, ...added];
          remember(session.id, { lastSeq: session.lastSeq, messages, bytes: entry.bytes + bytesOf(added) });
          return messages;
        }
      }
      const messages = await loadSessionMessages(db, session.id);
      const lastSeq = messages.at(-1)?.seq ?? 0;
      // Only a consistent read is kept: a session committed to since `session` was read is read again next time.
      if (lastSeq === session.lastSeq) remember(session.id, { lastSeq, messages, bytes: bytesOf(messages) });
      return messages;
    },
  };
}
