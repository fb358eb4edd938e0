export const platforms = ['slack', 'discord', 'telegram'] as const;
export type Platform = (typeof platforms)[number];

/** The parts that identify one conversation. */
export interface ConversationAddress {
  platform: Platform;
  /** Slack team, Discord application/guild, Telegram bot id. */
  accountId: string;
  /** Channel, DM or group. */
  chatId: string;
  /** Slack thread_ts, Telegram message_thread_id, Discord thread channel; '' when none. */
  threadId: string;
  /** The user's id where group chats are scoped per user; '' in one-to-one chats. */
  userScope: string;
}

/**
 * One stable string per conversation. Each part is URI-encoded so an id that
 * happens to contain the separator can never make two conversations collide.
 */
export function resolveConversationKey(address: ConversationAddress): string {
  return [address.platform, address.accountId, address.chatId, address.threadId, address.userScope].map(encodeURIComponent).join(':');
}
