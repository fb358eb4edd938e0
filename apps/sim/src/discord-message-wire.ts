import type { DiscordStore } from './discord-store.ts';
import { DiscordApiError, type DiscordMessage, type DiscordMessageReference, type DiscordSentRecord } from './discord-types.ts';

/**
 * The Message object on Discord's wire, both ways: the "Create Message" body
 * the bot sends (validated with Discord's error codes) and the Message the
 * API answers with.
 */

const contentLimit = 2000;
const nonceLimit = 25;

export interface MessageBody {
  content: string;
  components?: unknown[];
  nonce?: string | number;
  enforce_nonce?: boolean;
  message_reference?: DiscordMessageReference;
}

/** The subset of "Create Message" the sim understands, validated with Discord's error codes. */
export function readMessageBody(raw: unknown): MessageBody {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new DiscordApiError(400, 50109, 'The request body contains invalid JSON.');
  const body = raw as Record<string, unknown>;
  const content = body.content ?? '';
  if (typeof content !== 'string') throw invalidForm('content', 'STRING_TYPE_CONVERT', 'Could not interpret "content" as string.');
  const hasEmbeds = Array.isArray(body.embeds) && body.embeds.length > 0;
  if (content.trim() === '' && !hasEmbeds) throw new DiscordApiError(400, 50006, 'Cannot send an empty message');
  // Discord counts characters, not UTF-16 units.
  if ([...content].length > contentLimit) throw invalidForm('content', 'BASE_TYPE_MAX_LENGTH', `Must be ${contentLimit} or fewer in length.`);
  const nonce = body.nonce;
  if (nonce !== undefined && nonce !== null) {
    const valid = (typeof nonce === 'string' && nonce.length <= nonceLimit) || (typeof nonce === 'number' && Number.isInteger(nonce));
    if (!valid) throw invalidForm('nonce', 'BASE_TYPE_BAD_LENGTH', `Must be between 1 and ${nonceLimit} in length.`);
  }
  const reference = body.message_reference;
  if (reference !== undefined && reference !== null && (typeof reference !== 'object' || Array.isArray(reference))) {
    throw invalidForm('message_reference', 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
  }
  const components = readComponents(body.components);
  return {
    content,
    ...(components ? { components } : {}),
    ...(nonce !== undefined && nonce !== null ? { nonce: nonce as string | number } : {}),
    ...(body.enforce_nonce === true ? { enforce_nonce: true } : {}),
    ...(reference ? { message_reference: normaliseReference(reference as Record<string, unknown>) } : {}),
  };
}

/** Action rows of buttons; a custom_id is 1-100 characters (Discord message components docs). */
function readComponents(raw: unknown): unknown[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw invalidForm('components', 'BASE_TYPE_BAD_TYPE', 'Must be an array.');
  for (const row of raw as { components?: { custom_id?: unknown }[] }[]) {
    for (const component of row.components ?? []) {
      const id = component.custom_id;
      if (id !== undefined && (typeof id !== 'string' || id.length < 1 || id.length > 100)) throw invalidForm('components', 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
    }
  }
  return raw;
}

function normaliseReference(reference: Record<string, unknown>): DiscordMessageReference {
  const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : undefined);
  const messageId = text(reference.message_id);
  const channelId = text(reference.channel_id);
  const guildId = text(reference.guild_id);
  return {
    ...(messageId ? { message_id: messageId } : {}),
    ...(channelId ? { channel_id: channelId } : {}),
    ...(guildId ? { guild_id: guildId } : {}),
    ...(typeof reference.fail_if_not_exists === 'boolean' ? { fail_if_not_exists: reference.fail_if_not_exists } : {}),
  };
}

export function invalidForm(field: string, code: string, message: string): DiscordApiError {
  return new DiscordApiError(400, 50035, 'Invalid Form Body', { [field]: { _errors: [{ code, message }] } });
}

/** The Message object the API answers with for a message the bot made. */
export function toMessage(store: DiscordStore, record: DiscordSentRecord): DiscordMessage {
  return {
    id: record.id,
    channel_id: record.channel_id,
    author: store.botUser,
    content: record.content,
    timestamp: new Date(record.sentAt).toISOString(),
    edited_timestamp: record.editedAt ? new Date(record.editedAt).toISOString() : null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
    type: record.message_reference ? 19 : record.interaction_id ? 20 : 0,
    ...(record.nonce !== undefined ? { nonce: record.nonce } : {}),
    ...(record.message_reference ? { message_reference: record.message_reference } : {}),
    ...(record.components ? { components: record.components } : {}),
    ...(record.followup ? { webhook_id: store.applicationId, application_id: store.applicationId } : {}),
  };
}

/** Records a message the bot made and answers with it; it is then findable as a reply target. */
export function recordNewMessage(store: DiscordStore, record: DiscordSentRecord): DiscordMessage {
  store.recordSent(record);
  const message = toMessage(store, record);
  store.rememberMessage(message);
  return message;
}
