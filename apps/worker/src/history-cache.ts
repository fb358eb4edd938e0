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
  readonly size: number;
}

interface Entry {
  lastSeq: number;
  messages: MessageRow[];
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
 * is read again. Bounded by message count over all sessions, least recently
 * used first out, so memory stays flat however many conversations pass through.
 */
export function createHistoryCache(db: Database, maxMessages: number): HistoryCache {
  const entries = new Map<number, Entry>();
  let cached = 0;

  const remember = (sessionId: number, entry: Entry) => {
    entries.delete(sessionId);
    if (entry.messages.length > maxMessages) return;
    entries.set(sessionId, entry);
    cached += entry.messages.length;
    for (const [id, oldest] of entries) {
      if (cached <= maxMessages) break;
      entries.delete(id);
      cached -= oldest.messages.length;
    }
  };

  return {
    get size() {
      return cached;
    },
    append(sessionId, rows) {
      const entry = entries.get(sessionId);
      const first = rows[0];
      if (!entry || !first || first.seq !== entry.lastSeq + 1 || (rows.at(-1) as MessageRow).seq !== entry.lastSeq + rows.length) return;
      entries.delete(sessionId);
      cached -= entry.messages.length;
      remember(sessionId, { lastSeq: entry.lastSeq + rows.length, messages: [...entry.messages, ...rows] });
    },
    async load(session) {
      const entry = entries.get(session.id);
      if (entry) {
        entries.delete(session.id);
        cached -= entry.messages.length;
      }
      if (entry && entry.lastSeq === session.lastSeq) {
        remember(session.id, entry);
        return entry.messages;
      }
      if (entry && entry.lastSeq < session.lastSeq) {
        const added = await loadSessionMessages(db, session.id, entry.lastSeq);
        if (added[0]?.seq === entry.lastSeq + 1 && added.at(-1)?.seq === session.lastSeq && added.length === session.lastSeq - entry.lastSeq) {
          const messages = [...entry.messages, ...added];
          remember(session.id, { lastSeq: session.lastSeq, messages });
          return messages;
        }
      }
      const messages = await loadSessionMessages(db, session.id);
      const lastSeq = messages.at(-1)?.seq ?? 0;
      // Only a consistent read is kept: a session committed to since `session` was read is read again next time.
      if (lastSeq === session.lastSeq) remember(session.id, { lastSeq, messages });
      return messages;
    },
  };
}
