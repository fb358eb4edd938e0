import type { MethodFault } from './method-faults.ts';

/**
 * Slack wire shapes the sim produces (Slack's Events API and Web API docs),
 * written here rather than imported from an SDK or adapter.
 */

/** The emulated workspace, app and bot: what auth.test answers and every envelope carries. */
export const slackWorkspace = {
  teamId: 'T0SIM',
  teamName: 'Switchboard Sim',
  url: 'https://switchboard-sim.slack.com/',
  appId: 'A0SIM',
  botUserId: 'U0SIMBOT',
  botId: 'B0SIMBOT',
  botName: 'switchboard',
  /** The legacy verification token every envelope still carries. */
  verificationToken: 'sim-verification-token',
} as const;

/** What the control API reports for each message the bot posted. */
export interface SlackSentRecord {
  ts: string;
  channel: string;
  thread_ts?: string;
  /** The text as stored by Slack: cut at 40,000 characters. */
  text: string;
  /** Set when Slack would have cut the text. */
  truncated?: true;
  reply_broadcast?: true;
  blocks?: unknown;
  sentAt: number;
  editedAt?: number;
  edits?: Array<{ text: string; editedAt: number }>;
}

export type SlackFault = MethodFault;

export interface SlackEvent {
  type: string;
  [field: string]: unknown;
}

export interface SlackEventEnvelope {
  token: string;
  team_id: string;
  api_app_id: string;
  event: SlackEvent;
  type: 'event_callback';
  event_id: string;
  event_time: number;
  authorizations: Array<{ enterprise_id: null; team_id: string; user_id: string; is_bot: boolean; is_enterprise_install: boolean }>;
  is_ext_shared_channel: boolean;
  event_context: string;
}

/** One HTTP attempt at delivering an event: the first (retryNum 0) or one of Slack's retries. */
export interface SlackDeliveryAttempt {
  /** 0 when no HTTP answer came (refused, reset, or no answer within the ack timeout). */
  status: number;
  retryNum: number;
  retryReason?: SlackRetryReason;
  body: unknown;
  ackMs: number;
  error?: string;
}

export type SlackRetryReason = 'http_error' | 'http_timeout' | 'connection_failed';

/** A Web API failure: `{ok:false, error}`, HTTP 200 unless Slack uses a status (429). */
export class SlackApiError extends Error {
  readonly code: string;
  constructor(
    readonly error: string,
    readonly httpStatus = 200,
    readonly headers: Record<string, string> = {},
  ) {
    super(error);
    this.name = 'SlackApiError';
    this.code = `SLACK_${error}`;
  }
}
