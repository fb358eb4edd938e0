import type { GatewayIntentBits, GatewayOpcodes } from 'discord-api-types/v10';

/*
 * The Gateway's opcodes and intents, written out here and checked against
 * discord-api-types' declarations by `satisfies`: importing discord-api-types'
 * values loads all of it (about 15 MiB of RSS).
 */

export const opcode = { Dispatch: 0, Heartbeat: 1, Identify: 2, Resume: 6, Reconnect: 7, InvalidSession: 9, Hello: 10, HeartbeatAck: 11 } as const satisfies Pick<
  typeof GatewayOpcodes,
  'Dispatch' | 'Heartbeat' | 'Identify' | 'Resume' | 'Reconnect' | 'InvalidSession' | 'Hello' | 'HeartbeatAck'
>;
const intent = { GuildMessages: 512, DirectMessages: 4096, MessageContent: 32768 } as const satisfies Pick<typeof GatewayIntentBits, 'GuildMessages' | 'DirectMessages' | 'MessageContent'>;

export const defaultDiscordIntents = intent.GuildMessages | intent.DirectMessages | intent.MessageContent;

/** Close codes after which reconnecting cannot help (Discord Gateway docs), with what the operator must fix. */
export const fatalDiscordCloseCodes: ReadonlyMap<number, string> = new Map([
  [4004, 'authentication failed: DISCORD_BOT_TOKEN is wrong or was reset; copy the token again from the Developer Portal (Bot → Reset Token)'],
  [4010, 'invalid shard: the gateway refused shard [0, 1]; Switchboard runs one unsharded connection per bot'],
  [4011, 'sharding required: the bot is in too many guilds for one connection, which Switchboard does not shard'],
  [4012, 'invalid API version: the gateway refused v10; update Switchboard'],
  [4013, 'invalid intents: the intents sent on identify are not a valid bitfield'],
  [4014, 'disallowed intents: enable the MESSAGE_CONTENT privileged intent in the Developer Portal (Bot → Privileged Gateway Intents)'],
]);

/** Close codes after which the session cannot be resumed: identify anew. */
export const newSessionCloseCodes = new Set([4007, 4009]);
/** Our own close code: anything but 1000/1001 keeps the session resumable (1000 would invalidate it). */
export const resumableCloseCode = 4000;
