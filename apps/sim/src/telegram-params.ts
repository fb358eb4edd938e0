import { normaliseChatId } from './http-helpers.ts';
import { badRequest } from './telegram-types.ts';

export type Params = Record<string, unknown>;

/**
 * The Bot API takes parameters from the query string and the body alike
 * (Telegram Bot API, "Making requests"); body values win. Form and query values arrive as text,
 * so readers below accept both a typed JSON value and its text form.
 */
export function mergeParams(query: unknown, body: unknown): Params {
  const fromQuery = isPlainObject(query) ? query : {};
  const fromBody = isPlainObject(body) ? body : {};
  return { ...fromQuery, ...fromBody };
}

export function readChatId(params: Params): number | string {
  const chatId = normaliseChatId(params.chat_id);
  if (chatId === undefined) throw badRequest('chat_id is empty');
  if (typeof chatId === 'string' && !/^@[A-Za-z0-9_]{4,32}$/.test(chatId)) throw badRequest('chat not found');
  return chatId;
}

export function readOptionalInt(params: Params, name: string): number | undefined {
  const raw = params[name];
  if (raw === undefined || raw === null || raw === '') return undefined;
  const value = typeof raw === 'number' ? raw : Number(String(raw).trim());
  if (!Number.isInteger(value)) throw badRequest(`field "${name}" must be of type Integer`);
  return value;
}

export function readOptionalString(params: Params, name: string): string | undefined {
  const raw = params[name];
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw);
  throw badRequest(`field "${name}" must be of type String`);
}

export function readBoolean(params: Params, name: string): boolean {
  const raw = params[name];
  return raw === true || raw === 'true' || raw === '1' || raw === 1;
}

/** Object parameters (reply_parameters, reply_markup) come JSON-serialised in forms and queries. */
export function readOptionalObject(params: Params, name: string): Record<string, unknown> | undefined {
  const raw = params[name];
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (isPlainObject(raw)) return raw;
  if (typeof raw === 'string') {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (isPlainObject(parsed)) return parsed;
    } catch {
      // fall through to the Bot API's wording below
    }
  }
  throw badRequest(`can't parse ${name} JSON object`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
