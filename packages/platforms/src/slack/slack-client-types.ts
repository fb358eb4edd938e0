// What the Slack Web API client is given and what it learns of its token: a module of its own so that
// slack-sender.ts and slack-web-client.ts (which it loads on first use) share them without importing each other.

export interface SlackClientOptions {
  /** Bot token (`xoxb-…`). */
  token: string;
  /** Web API base, e.g. https://slack.com/api/ (the simulator's /api/ in tests). */
  apiUrl: string;
  /** Per-request timeout; 0 = none. */
  timeoutMs?: number;
}

export interface SlackAuthInfo {
  /** The bot's user id: events it authored are ignored. */
  userId: string;
  botId: string | undefined;
  teamId: string;
}
