import type postgres from 'postgres';

/**
 * What the database holds about a conversation a check failed for: its
 * inbound events, turns and outbox rows with their times, so a failure seen
 * once in a long run can be explained from its report alone (the run's
 * database is thrown away with it).
 */
export interface ConversationDump {
  chat: string;
  events: { id: number; status: string; turnId: number | null; receivedAt: string; text: string }[];
  turns: { id: number; status: string; workerId: string | null; error: string | null; startedAt: string; endedAt: string | null }[];
  outbox: { id: number; turnId: number | null; status: string; attempts: number; createdAt: string; sentAt: string | null; text: string }[];
}

/** `chats` as `platform:chatId`; at most `limit` of them. Never throws: a dump is a help, not a check. */
export async function dumpConversations(sql: postgres.Sql, chats: string[], limit = 5): Promise<ConversationDump[]> {
  const dumps: ConversationDump[] = [];
  for (const chat of [...new Set(chats)].slice(0, limit)) {
    const [platform, chatId] = splitChat(chat);
    try {
      const [conversation] = await sql<{ id: string }[]>`select id from conversations where platform = ${platform} and chat_id = ${chatId} order by id limit 1`;
      if (!conversation) continue;
      const id = conversation.id;
      const [events, turns, outbox] = await Promise.all([
        sql<ConversationDump['events']>`
          select id::int, status, turn_id::int as "turnId", to_char(received_at, 'HH24:MI:SS.MS') as "receivedAt", left(text, 12) as text
          from inbound_events where conversation_id = ${id} order by id`,
        sql<ConversationDump['turns']>`
          select id::int, status, worker_id as "workerId", error, to_char(started_at, 'HH24:MI:SS.MS') as "startedAt", to_char(ended_at, 'HH24:MI:SS.MS') as "endedAt"
          from turns where conversation_id = ${id} order by id`,
        sql<ConversationDump['outbox']>`
          select id::int, turn_id::int as "turnId", status, attempts, to_char(created_at, 'HH24:MI:SS.MS') as "createdAt", to_char(sent_at, 'HH24:MI:SS.MS') as "sentAt", left(text, 12) as text
          from outbox where conversation_id = ${id} order by id`,
      ]);
      dumps.push({ chat, events, turns, outbox });
    } catch {
      // The report is still written without it.
    }
  }
  return dumps;
}

function splitChat(chat: string): [string, string] {
  const at = chat.indexOf(':');
  return [chat.slice(0, at), chat.slice(at + 1)];
}
