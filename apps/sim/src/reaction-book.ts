/**
 * The bot's reactions on users' messages, by message key (platform-specific:
 * `chatId:messageId`, `channel:ts`, `channelId:messageId`), so tests can read
 * "the reactions on message X now". `calls` counts accepted reaction calls:
 * a test of STATUS_REACTIONS=off reads that none were made.
 */
export class ReactionBook {
  calls = 0;
  private readonly byMessage = new Map<string, string[]>();

  /** Adds `emoji`; false when the bot already reacted with it. */
  add(key: string, emoji: string): boolean {
    const now = this.byMessage.get(key) ?? [];
    if (now.includes(emoji)) return false;
    this.calls += 1;
    this.byMessage.set(key, [...now, emoji]);
    return true;
  }

  /** Removes `emoji`; false when the bot had not reacted with it. */
  remove(key: string, emoji: string): boolean {
    const now = this.byMessage.get(key) ?? [];
    if (!now.includes(emoji)) return false;
    this.calls += 1;
    const left = now.filter((e) => e !== emoji);
    if (left.length === 0) this.byMessage.delete(key);
    else this.byMessage.set(key, left);
    return true;
  }

  /** Telegram's setMessageReaction: the set becomes `emoji`. */
  replace(key: string, emoji: string[]): void {
    this.calls += 1;
    if (emoji.length === 0) this.byMessage.delete(key);
    else this.byMessage.set(key, [...emoji]);
  }

  on(key: string): string[] {
    return [...(this.byMessage.get(key) ?? [])];
  }

  /** Every message with reactions, for the control API's listing. */
  all(): Record<string, string[]> {
    return Object.fromEntries(this.byMessage);
  }

  clear(): void {
    this.calls = 0;
    this.byMessage.clear();
  }
}
