import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { EventHub } from './event-hub.ts';
import { ReactionBook } from './reaction-book.ts';
import {
  discordEpochMs,
  type DiscordFault,
  type DiscordMessage,
  type DiscordSentRecord,
  type DiscordTypingRecord,
  type DiscordUser,
} from './discord-types.ts';

export interface DiscordOptions {
  botToken?: string;
  applicationId?: string;
  interactionsUrl?: string;
  /** Hello's heartbeat_interval, ms (Discord: ~41250; tests use a few hundred). */
  heartbeatIntervalMs?: number;
  /** The create-message bucket, per channel (Discord: 5 per 5 s); other routes allow 50 per second. */
  rateLimit?: { limit: number; windowMs: number };
}

export interface InteractionState {
  id: string;
  applicationId: string;
  token: string;
  channelId: string;
  guildId?: string;
  /** The type of the gateway's answer (4 message, 5 deferred), once answered. */
  responseType?: number;
  original?: DiscordSentRecord;
}

interface Bucket {
  count: number;
  resetAt: number;
}

/** How long a nonce sent with enforce_nonce dedupes ("a few minutes", Discord REST docs). */
const nonceWindowMs = 5 * 60_000;
const defaultApplicationId = '1100000000000000001';

/**
 * Everything the emulated Discord REST side remembers. Snowflakes keep
 * increasing across `reset()`: a gateway dedupes on message ids, and an id
 * reused after a reset would look like a replay.
 */
export class DiscordStore {
  readonly options: DiscordOptions;
  readonly applicationId: string;
  readonly botUser: DiscordUser;
  readonly publicKeyHex: string;
  interactionsUrl: string | undefined;
  sent: DiscordSentRecord[] = [];
  typing: DiscordTypingRecord[] = [];
  faults: DiscordFault[] = [];
  /** The bot's reactions now, by `channelId:messageId`. */
  readonly reactions = new ReactionBook();

  private readonly privateKey: KeyObject;
  private readonly sentByChannel = new Map<string, DiscordSentRecord[]>();
  private readonly nonces = new Map<string, { record: DiscordSentRecord; at: number }>();
  private readonly knownMessages = new Map<string, DiscordMessage>();
  private readonly interactions = new Map<string, InteractionState>();
  private readonly buckets = new Map<string, Bucket>();
  private lastIdMs = 0;
  private idIncrement = 0;

  constructor(
    options: DiscordOptions,
    private readonly hub: EventHub,
  ) {
    this.options = options;
    this.applicationId = options.applicationId ?? defaultApplicationId;
    // Modern applications' bot user shares the application's id.
    this.botUser = { id: this.applicationId, username: 'switchboard-sim', discriminator: '0', global_name: 'Switchboard Sim', avatar: null, bot: true };
    this.interactionsUrl = options.interactionsUrl;
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    this.privateKey = privateKey;
    this.publicKeyHex = Buffer.from((publicKey.export({ format: 'jwk' }) as { x: string }).x, 'base64url').toString('hex');
  }

  get heartbeatIntervalMs(): number {
    return this.options.heartbeatIntervalMs ?? 41_250;
  }

  /** Snowflake: ms since the Discord epoch << 22 | increment; strictly increasing within this process. */
  nextId(): string {
    let now = Date.now();
    if (now <= this.lastIdMs) {
      this.idIncrement += 1;
      if (this.idIncrement > 0xfff) {
        this.lastIdMs += 1;
        this.idIncrement = 0;
      }
      now = this.lastIdMs;
    } else {
      this.lastIdMs = now;
      this.idIncrement = 0;
    }
    return ((BigInt(now - discordEpochMs) << 22n) | BigInt(this.idIncrement)).toString();
  }

  /** Checks `Authorization: Bot <token>`; without a configured token any bot token is accepted. */
  isAuthorised(header: string | undefined): boolean {
    if (!header?.startsWith('Bot ')) return false;
    const token = header.slice(4);
    return token.length > 0 && (this.options.botToken === undefined || token === this.options.botToken);
  }

  /** Ed25519 over timestamp + body, as Discord signs interactions (Discord interactions docs). */
  signInteraction(timestamp: string, body: string): string {
    return sign(null, Buffer.from(timestamp + body, 'utf8'), this.privateKey).toString('hex');
  }

  rememberMessage(message: DiscordMessage): void {
    this.knownMessages.set(message.id, message);
  }

  findMessage(id: string): DiscordMessage | undefined {
    return this.knownMessages.get(id);
  }

  /**
   * Discord dedupes a nonce per author, not per channel: "another message
   * created by the same author with the same nonce" is returned. Every
   * message made through this REST API is the bot's, so the nonce alone is
   * the key; a bot that reused a nonce in another channel gets the first
   * message back, as on Discord.
   */
  findByNonce(nonce: string | number): DiscordSentRecord | undefined {
    const entry = this.nonces.get(String(nonce));
    if (!entry) return undefined;
    if (Date.now() - entry.at > nonceWindowMs) {
      this.nonces.delete(String(nonce));
      return undefined;
    }
    return entry.record;
  }

  recordSent(record: DiscordSentRecord): void {
    this.sent.push(record);
    const list = this.sentByChannel.get(record.channel_id) ?? [];
    list.push(record);
    this.sentByChannel.set(record.channel_id, list);
    if (record.nonce !== undefined) this.nonces.set(String(record.nonce), { record, at: Date.now() });
    this.hub.publish('discord.sent', record);
  }

  recordEdit(record: DiscordSentRecord, content: string): void {
    record.content = content;
    record.editedAt = Date.now();
    record.edits = (record.edits ?? 0) + 1;
    record.editHistory = [...(record.editHistory ?? []), { content, editedAt: record.editedAt }];
    this.hub.publish('discord.edited', record);
  }

  sentTo(channelId: string | undefined): DiscordSentRecord[] {
    if (channelId === undefined) return this.sent;
    return this.sentByChannel.get(channelId) ?? [];
  }

  recordTyping(channelId: string): void {
    const record = { channel_id: channelId, at: Date.now() };
    this.typing.push(record);
    this.hub.publish('discord.typing', record);
  }

  rememberInteraction(state: InteractionState): void {
    this.interactions.set(state.token, state);
  }

  findInteraction(applicationId: string, token: string): InteractionState | undefined {
    const state = this.interactions.get(token);
    return state && state.applicationId === applicationId ? state : undefined;
  }

  /** Consumes one use of the first fault armed for `route` (or for every route, '*'). */
  takeFault(route: string): DiscordFault | undefined {
    // `messages` covers creating and editing; `edits` only editing a channel message.
    const index = this.faults.findIndex((fault) => fault.route === route || fault.route === '*' || (route === 'edits' && fault.route === 'messages'));
    if (index < 0) return undefined;
    const fault = this.faults[index] as DiscordFault;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.faults.splice(index, 1);
    return fault;
  }

  /**
   * Counts one request against its bucket (route + major parameter) and
   * returns the rate-limit headers Discord would send, and whether the
   * request is over the limit.
   */
  takeBucket(route: string, major: string): { headers: Record<string, string>; limited: boolean; retryAfterSeconds: number } {
    const { limit, windowMs } = route === 'channels/messages' ? (this.options.rateLimit ?? { limit: 5, windowMs: 5000 }) : { limit: 50, windowMs: 1000 };
    const key = `${route}:${major}`;
    const now = Date.now();
    let bucket = this.buckets.get(key);
    if (!bucket || bucket.resetAt <= now) {
      bucket = { count: 0, resetAt: now + windowMs };
      this.buckets.set(key, bucket);
    }
    const limited = bucket.count >= limit;
    if (!limited) bucket.count += 1;
    const resetAfter = Math.max(0, bucket.resetAt - now) / 1000;
    return {
      limited,
      retryAfterSeconds: resetAfter,
      headers: {
        'x-ratelimit-limit': String(limit),
        'x-ratelimit-remaining': String(Math.max(0, limit - bucket.count)),
        'x-ratelimit-reset': (bucket.resetAt / 1000).toFixed(3),
        'x-ratelimit-reset-after': resetAfter.toFixed(3),
        // Discord's bucket ids are opaque hashes shared by routes with one limit.
        'x-ratelimit-bucket': createHash('sha1').update(route).digest('hex').slice(0, 16),
      },
    };
  }

  reset(): void {
    this.sent = [];
    this.typing = [];
    this.faults = [];
    this.reactions.clear();
    this.sentByChannel.clear();
    this.nonces.clear();
    this.knownMessages.clear();
    this.interactions.clear();
    this.buckets.clear();
    // The Interactions Endpoint URL is app configuration: it survives a reset, as on Discord.
  }
}
