import { parseScheduleCancelPayload, scheduleCancelText } from '@switchboard/core';
import { z } from 'zod';
import { PlatformError } from '../errors.ts';
import { normaliseInbound } from '../normalise-inbound.ts';
import type { ButtonPress, InboundMessage } from '../types.ts';
import { assertOptionDepth } from './option-depth.ts';

const snowflake = z.string().regex(/^\d{1,20}$/, 'must be a snowflake id');
const userSchema = z.object({ id: snowflake, username: z.string().optional() }).passthrough();

interface CommandOption {
  name: string;
  type: number;
  value?: string | number | boolean;
  options?: CommandOption[];
}
const optionSchema: z.ZodType<CommandOption> = z.lazy(() =>
  z
    .object({
      name: z.string().min(1),
      type: z.number().int(),
      value: z.union([z.string(), z.number(), z.boolean()]).optional(),
      options: z.array(optionSchema).optional(),
    })
    .passthrough(),
);

const interactionSchema = z
  .object({
    id: snowflake,
    application_id: snowflake,
    type: z.number().int(),
    token: z.string().min(1),
    channel_id: snowflake.optional(),
    channel: z.object({ id: snowflake, type: z.number().int().optional() }).passthrough().optional(),
    guild_id: snowflake.optional(),
    /** Where the interaction happened: 0 GUILD, 1 BOT_DM, 2 PRIVATE_CHANNEL (Discord interactions docs, "Interaction Context Types"). */
    context: z.number().int().optional(),
    member: z.object({ user: userSchema, roles: z.array(snowflake).default([]) }).passthrough().optional(),
    user: userSchema.optional(),
    data: z
      .object({ name: z.string().min(1).optional(), custom_id: z.string().optional(), component_type: z.number().int().optional(), options: z.array(optionSchema).optional() })
      .passthrough()
      .optional(),
  })
  .passthrough();

export interface DiscordInteractionContext {
  /** Conversations are keyed by the configured application id, else by the one the interaction names. */
  applicationId?: string;
}

export type DiscordInteractionParseResult =
  | { kind: 'ping' }
  | { kind: 'command'; name: string; message: InboundMessage }
  | { kind: 'button'; press: ButtonPress }
  | { kind: 'unsupported'; reason: string };

/** Interaction types (Discord interactions docs): 1 PING, 2 APPLICATION_COMMAND, 3 MESSAGE_COMPONENT; the rest are not used. */
const interactionType = { ping: 1, applicationCommand: 2, messageComponent: 3 } as const;
/** Component type 2: a button. */
const buttonComponent = 2;

/**
 * An interaction body → PING, a chat command as an inbound message, or the
 * reason it is not handled. A slash command becomes the text `/<name> <args>`
 * (option values in order), so the worker reads it exactly like a typed
 * command. It lands in the same conversation as messages in that channel:
 * chatId = channel id, userScope = '' in DMs and the user's id in guilds.
 * The reply target carries the interaction token: the sender answers the
 * deferred response through the interaction webhook (valid 15 minutes).
 * Throws PlatformError INVALID_PAYLOAD for something that is not an interaction,
 * options nested deeper than Discord allows included.
 */
export function parseDiscordInteraction(body: unknown, context: DiscordInteractionContext = {}): DiscordInteractionParseResult {
  // Before the recursive schema, which a deep enough body would overflow.
  assertOptionDepth(body);
  const parsed = interactionSchema.safeParse(body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new PlatformError('INVALID_PAYLOAD', `not a Discord interaction: ${first?.path.join('.') || 'body'} ${first?.message ?? ''}`.trim());
  }
  const interaction = parsed.data;
  if (interaction.type === interactionType.ping) return { kind: 'ping' };
  if (interaction.type !== interactionType.applicationCommand && interaction.type !== interactionType.messageComponent) {
    return { kind: 'unsupported', reason: `interaction_type_${interaction.type}` };
  }
  if (!interaction.data) throw new PlatformError('INVALID_PAYLOAD', 'not a Discord interaction: data is required for a command or component');
  const user = interaction.member?.user ?? interaction.user;
  if (!user) throw new PlatformError('INVALID_PAYLOAD', 'not a Discord interaction: member.user or user is required');
  if (interaction.type === interactionType.messageComponent) {
    const { custom_id: customId, component_type: componentType } = interaction.data;
    if (componentType !== buttonComponent) return { kind: 'unsupported', reason: `component_type_${componentType ?? 'missing'}` };
    if (!customId) throw new PlatformError('INVALID_PAYLOAD', 'not a Discord interaction: a button press without custom_id');
    // A Cancel button under a `/schedules` list (docs/schedules.md, "In chat"): the command it stands for, run like the slash command.
    const cancelId = parseScheduleCancelPayload(customId);
    if (cancelId !== null) return { kind: 'command', name: 'schedules', message: commandMessage(interaction, user, scheduleCancelText(cancelId), context) };
    const accountId = context.applicationId ?? interaction.application_id;
    return { kind: 'button', press: { platform: 'discord', accountId, userId: user.id, payload: customId, answer: {} } };
  }
  if (!interaction.data.name) throw new PlatformError('INVALID_PAYLOAD', 'not a Discord interaction: data.name is required for a command');
  const name = interaction.data.name.toLowerCase();
  const args = flattenOptionValues(interaction.data.options ?? []);
  return { kind: 'command', name, message: commandMessage(interaction, user, args.length > 0 ? `/${name} ${args.join(' ')}` : `/${name}`, context) };
}

type Interaction = z.infer<typeof interactionSchema>;

/**
 * A command interaction (a slash command, or a button that stands for one) as
 * the message it is: in the conversation of the channel it came from, from
 * the user who sent or pressed it, answered through the interaction's token.
 */
function commandMessage(interaction: Interaction, user: { id: string }, text: string, context: DiscordInteractionContext): InboundMessage {
  const channelId = interaction.channel_id ?? interaction.channel?.id;
  if (!channelId) throw new PlatformError('INVALID_PAYLOAD', 'not a Discord interaction: channel_id is required');
  const inGuild = interaction.guild_id !== undefined;
  const direct = isBotDirectMessage(interaction);
  return normaliseInbound({
    platform: 'discord',
    eventId: interaction.id,
    userId: user.id,
    ...(inGuild && interaction.member ? { roles: interaction.member.roles } : {}),
    text,
    address: {
      platform: 'discord',
      accountId: context.applicationId ?? interaction.application_id,
      chatId: channelId,
      threadId: '',
      // Anywhere but the user's own DM with the bot, each user has their own conversation (as in a guild channel).
      userScope: direct ? '' : user.id,
    },
    replyTarget: { channelId, interactionToken: interaction.token, applicationId: interaction.application_id },
  });
}

/** Channel type 3: GROUP_DM. */
const groupDmChannel = 3;
/** Interaction context 1: BOT_DM. */
const botDmContext = 1;

/**
 * Only a DM between the user and the bot is direct (issue 30, finding 8): an
 * interaction without guild_id may also come from a group DM or a DM between
 * two users (a user-installed app), whose members must not share one
 * conversation nor pass as the DM policy's direct messages. Discord's
 * `context` says which; without it, the channel's type does.
 */
function isBotDirectMessage(interaction: { guild_id?: string | undefined; context?: number | undefined; channel?: { type?: number | undefined } | undefined }): boolean {
  if (interaction.guild_id !== undefined) return false;
  if (interaction.context !== undefined) return interaction.context === botDmContext;
  return interaction.channel?.type !== groupDmChannel;
}

// Subcommands (types 1 and 2) nest their own options; their names are part of the command line.
function flattenOptionValues(options: CommandOption[]): string[] {
  const values: string[] = [];
  for (const option of options) {
    if (option.type === 1 || option.type === 2) values.push(option.name, ...flattenOptionValues(option.options ?? []));
    else if (option.value !== undefined) values.push(String(option.value));
  }
  return values;
}
