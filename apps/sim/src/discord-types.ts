/**
 * Discord wire shapes the sim produces (discord-api-docs: Message, User,
 * Gateway payloads), written here from Discord's developer docs rather than
 * imported from discord-api-types or an adapter.
 */

export interface DiscordUser {
  id: string;
  username: string;
  discriminator: string;
  global_name: string | null;
  avatar: string | null;
  bot?: boolean;
}

export interface DiscordMessageReference {
  message_id?: string;
  channel_id?: string;
  guild_id?: string;
  fail_if_not_exists?: boolean;
}

export interface DiscordMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  author: DiscordUser;
  member?: { roles: string[]; joined_at: string };
  content: string;
  timestamp: string;
  edited_timestamp: string | null;
  tts: boolean;
  mention_everyone: boolean;
  mentions: DiscordUser[];
  mention_roles: string[];
  attachments: unknown[];
  embeds: unknown[];
  pinned: boolean;
  type: number;
  nonce?: string | number;
  message_reference?: DiscordMessageReference;
  referenced_message?: DiscordMessage | null;
  channel_type?: number;
  webhook_id?: string;
  application_id?: string;
  components?: unknown[];
}

/** What the control API reports for every message the bot made, in order. */
export interface DiscordSentRecord {
  id: string;
  channel_id: string;
  content: string;
  nonce?: string | number;
  message_reference?: DiscordMessageReference;
  /** Made through the interaction webhook (a follow-up, or the edit of the deferred response). */
  followup?: boolean;
  /** The interaction's original response (`PATCH …/messages/@original` or a type 4 answer). */
  original?: boolean;
  interaction_id?: string;
  /** Action rows of buttons, as sent (Discord message components); an edit with `components: []` removes them. */
  components?: unknown[];
  /** An interaction answer only the presser sees (flags 64). */
  ephemeral?: true;
  sentAt: number;
  editedAt?: number;
  edits?: number;
  /** Each edit's content in order, so tests can follow a message that grows in place. */
  editHistory?: Array<{ content: string; editedAt: number }>;
}

export interface DiscordTypingRecord {
  channel_id: string;
  at: number;
}

export type DiscordFaultRoute = 'messages' | 'edits' | 'typing' | 'reactions' | 'followup' | 'gateway' | 'users' | '*';

export interface DiscordFault {
  route: DiscordFaultRoute;
  kind: '429' | '5xx' | 'delay';
  status: number;
  remaining: number;
  /** Seconds, as Discord's retry_after. */
  retryAfter: number;
  delayMs: number;
}

export interface GatewayPayload {
  op: number;
  d: unknown;
  s: number | null;
  t: string | null;
}

/** Discord REST error, rendered as `{message, code, errors?}` with the HTTP status. */
export class DiscordApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly errors?: unknown,
  ) {
    super(message);
    this.name = 'DiscordApiError';
  }
}

/** Gateway opcodes (Discord Gateway docs). */
export const op = {
  dispatch: 0,
  heartbeat: 1,
  identify: 2,
  presenceUpdate: 3,
  voiceStateUpdate: 4,
  resume: 6,
  reconnect: 7,
  requestGuildMembers: 8,
  invalidSession: 9,
  hello: 10,
  heartbeatAck: 11,
} as const;

/** Discord's own epoch for snowflakes: 2015-01-01T00:00:00Z. */
export const discordEpochMs = 1_420_070_400_000;
