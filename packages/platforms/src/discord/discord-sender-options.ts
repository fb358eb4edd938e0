// What createDiscordSender is given: a module of its own so that discord-sender.ts and
// discord-rest-sender.ts (which it loads on first use) share it without importing each other.

export interface DiscordSenderOptions {
  token: string;
  /** REST base without the version, e.g. https://discord.com/api (the simulator's `<url>/api` in tests). */
  apiUrl: string;
  /** Characters per message; Discord's hard limit is 2000. */
  messageLimit?: number;
  /** One request's timeout. */
  timeoutMs?: number;
}
