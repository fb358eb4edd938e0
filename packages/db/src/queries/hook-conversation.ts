import type { Database } from '../client.ts';

/** What a triggered turn needs of its conversation: where it is (to store the input under its key and address the chat) and whether it runs. */
export interface HookConversation {
  id: number;
  key: string;
  platform: string;
  accountId: string;
  chatId: string;
  threadId: string;
  userScope: string;
  status: 'active' | 'suspended';
}

/** The conversation a hook names, or undefined when there is none (never created, or deleted). One indexed read by primary key. */
export async function findHookConversation(db: Database, conversationId: number): Promise<HookConversation | undefined> {
  const [row] = await db.$client<{ id: string; key: string; platform: string; account_id: string; chat_id: string; thread_id: string; user_scope: string; status: 'active' | 'suspended' }[]>`
    select id, key, platform, account_id, chat_id, thread_id, user_scope, status from conversations where id = ${conversationId}`;
  if (!row) return undefined;
  return { id: Number(row.id), key: row.key, platform: row.platform, accountId: row.account_id, chatId: row.chat_id, threadId: row.thread_id, userScope: row.user_scope, status: row.status };
}
