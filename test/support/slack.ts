import { createHmac } from 'node:crypto';

export const slackSigningSecret = 'test-slack-signing-secret';
export const slackBotToken = 'xoxb-test-slack-token';

/** The env that turns Slack on in the gateway and worker, pointed at the simulator. */
export function slackEnv(simUrl: string): Record<string, string> {
  return { SLACK_SIGNING_SECRET: slackSigningSecret, SLACK_BOT_TOKEN: slackBotToken, SLACK_API_URL: `${simUrl}/api/` };
}

/** What `POST /control/slack/events` accepts (apps/sim README). */
export interface SlackEventInput {
  channel: string;
  text: string;
  user?: string;
  type?: 'message' | 'app_mention';
  channel_type?: 'channel' | 'group' | 'im' | 'mpim' | 'app_home';
  thread_ts?: string;
  bot_id?: string;
  subtype?: string;
  ts?: string;
  event_id?: string;
  signing?: 'valid' | 'bad' | 'stale' | 'none';
  retryOnFailure?: boolean;
  retryNum?: number;
  retryReason?: 'http_error' | 'http_timeout' | 'connection_failed';
  /** Files by their sim id (POST /control/media/files), shared with the message. */
  files?: string[];
}

export interface SlackDelivery {
  /** The status of the last attempt (0 = no answer). */
  status: number;
  eventId: string;
  /** The user message's ts. */
  ts: string;
  /** The gateway's answer to the last attempt. */
  body: unknown;
  attempts: Array<{ status: number; retryNum: number; retryReason?: string; body: unknown }>;
  envelope: Record<string, unknown>;
}

export interface SentSlackMessage {
  ts: string;
  channel: string;
  thread_ts?: string;
  text: string;
}

export async function sendSlackEvent(simUrl: string, input: SlackEventInput): Promise<SlackDelivery> {
  const response = await fetch(`${simUrl}/control/slack/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user: 'U0TESTER', ...input }),
  });
  if (!response.ok) throw new Error(`/control/slack/events answered ${response.status}: ${await response.text()}`);
  const answer = (await response.json()) as {
    event_id: string;
    ts: string;
    attempts: SlackDelivery['attempts'];
    envelope: Record<string, unknown>;
  };
  const last = answer.attempts[answer.attempts.length - 1];
  return { status: last?.status ?? 0, eventId: answer.event_id, ts: answer.ts, body: last?.body, attempts: answer.attempts, envelope: answer.envelope };
}

/** Waits until the bot has posted `count` messages in `channel` in all, and returns them in order. */
export async function waitForSlackMessages(simUrl: string, channel: string, count: number, timeoutMs = 20_000): Promise<SentSlackMessage[]> {
  const response = await fetch(`${simUrl}/control/slack/wait?channel=${encodeURIComponent(channel)}&count=${count}&timeout_ms=${timeoutMs}`);
  const body = (await response.json()) as SentSlackMessage[] | { sent: SentSlackMessage[] };
  if (!response.ok) {
    const sent = Array.isArray(body) ? body : body.sent;
    throw new Error(`expected ${count} Slack messages in ${channel}, got ${sent.length}: ${JSON.stringify(sent.map((m) => m.text.slice(0, 80)))}`);
  }
  return body as SentSlackMessage[];
}

/** Signs a body as Slack does, for requests a test builds by hand. */
export function signSlackBody(body: string, nowMs = Date.now()): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  const signature = `v0=${createHmac('sha256', slackSigningSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return { 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature };
}
