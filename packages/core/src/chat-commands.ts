import type { BusyInputModeName } from './busy-mode.ts';
import { busyInputModes } from './busy-mode.ts';

export const chatCommandNames = ['new', 'reset', 'stop', 'status', 'busy', 'compact', 'help', 'approve', 'deny', 'schedules'] as const;
export type ChatCommandName = (typeof chatCommandNames)[number];
/** The commands whose arguments mean nothing to the worker. */
type PlainCommandName = Exclude<ChatCommandName, 'busy' | 'schedules'>;

/**
 * What `/schedules` asks for (docs/schedules.md, "In chat"): the list, one
 * schedule cancelled, or neither (arguments it cannot read: the reply says how).
 */
export type SchedulesAction = { kind: 'list' } | { kind: 'cancel'; id: number } | { kind: 'usage' };

export type ChatCommand =
  | { name: PlainCommandName; args: string }
  | { name: 'busy'; args: string; mode: BusyInputModeName | null }
  | { name: 'schedules'; args: string; action: SchedulesAction };

const commandPattern = /^[/!]([A-Za-z_]+)(?:@([A-Za-z0-9_]+))?(?:\s+([\s\S]*))?$/;

/**
 * Reads a chat command: `/name args`, `/name@botname args` (Telegram groups)
 * or `!name args` (Slack threads, where slash commands are not allowed).
 * Returns null for ordinary text, for a command addressed to another bot, and
 * for any `/word` that is not one of ours: an unknown word is text for the
 * model (issue 17), so it cannot claim a command's exemptions.
 */
export function parseChatCommand(text: string, botUsername?: string): ChatCommand | null {
  const match = commandPattern.exec(text.trim());
  if (!match) return null;
  const [, rawName = '', addressee, rest = ''] = match;
  if (addressee && botUsername && addressee.toLowerCase() !== botUsername.toLowerCase()) return null;
  const name = rawName.toLowerCase();
  const args = rest.trim();
  if (!(chatCommandNames as readonly string[]).includes(name)) return null;
  if (name === 'busy') {
    const mode = (busyInputModes as readonly string[]).includes(args.toLowerCase()) ? (args.toLowerCase() as BusyInputModeName) : null;
    return { name: 'busy', args, mode };
  }
  if (name === 'schedules') return { name: 'schedules', args, action: parseSchedulesArgs(args) };
  return { name: name as PlainCommandName, args };
}

/** A schedule id as typed or carried by a button: digits only, within a safe integer, never 0. */
const scheduleIdPattern = /^[1-9][0-9]{0,14}$/;

/**
 * `/schedules` (or `/schedules list`, Discord's subcommand) → list;
 * `/schedules cancel <id>` (also `#<id>`) → cancel; anything else → usage.
 */
function parseSchedulesArgs(args: string): SchedulesAction {
  if (args === '' || args.toLowerCase() === 'list') return { kind: 'list' };
  const [verb, rawId, ...rest] = args.split(/\s+/);
  const id = rawId?.replace(/^#/, '') ?? '';
  if (verb?.toLowerCase() !== 'cancel' || rest.length > 0 || !scheduleIdPattern.test(id)) return { kind: 'usage' };
  return { kind: 'cancel', id: Number(id) };
}

/** The text a Cancel button stands for: a press is stored as if this was typed (docs/schedules.md, "In chat"). */
export function scheduleCancelText(id: number): string {
  return `/schedules cancel ${id}`;
}

const cancelPayloadPrefix = 'sch:cancel:';

/** A Cancel button's payload (callback_data, Slack action value, Discord custom_id): at most 26 bytes, inside Telegram's 64. */
export function scheduleCancelPayload(id: number): string {
  return `${cancelPayloadPrefix}${id}`;
}

/** The schedule id a button payload cancels; null: not a Cancel button of ours (an approval's, or a forged one). */
export function parseScheduleCancelPayload(payload: string): number | null {
  if (!payload.startsWith(cancelPayloadPrefix)) return null;
  const id = payload.slice(cancelPayloadPrefix.length);
  return scheduleIdPattern.test(id) ? Number(id) : null;
}

/**
 * `/name@someone_else …`: a command for another bot in the same group (with
 * privacy mode off, or as an admin, a bot receives every bot's commands).
 * It is not ours to run, and above all a `/stop` meant for another bot must
 * not stop our turn. False when our username is unknown: then it cannot be
 * told apart from a command for us.
 */
export function isCommandForAnotherBot(text: string, botUsername: string | undefined): boolean {
  if (!botUsername) return false;
  const addressee = commandPattern.exec(text.trim())?.[2];
  return addressee !== undefined && text.trim().startsWith('/') && addressee.toLowerCase() !== botUsername.toLowerCase();
}

/** What a new input means for a running turn, decided at ingress without any state. */
export function classifySignal(text: string, botUsername?: string): 'input' | 'stop' | 'none' {
  return signalOfCommand(parseChatCommand(text, botUsername));
}

/** classifySignal for text already parsed (null: not a command), so ingress parses each text once. */
export function signalOfCommand(command: ChatCommand | null): 'input' | 'stop' | 'none' {
  if (!command) return 'input';
  return command.name === 'stop' ? 'stop' : 'none';
}

/**
 * What the worker needs of a command: its name, for `/busy` the mode it
 * names (null: none or an unknown one, so the reply lists the modes), and
 * for `/schedules` what it asks. The rest of the text is never read again.
 */
export type StoredCommand = { name: PlainCommandName } | { name: 'busy'; mode: BusyInputModeName | null } | { name: 'schedules'; action: SchedulesAction };

/**
 * The `inbound_events.command` value of text ingress parsed and found to be
 * no command. NULL is kept for "never parsed" (rows stored before migration
 * 0006, or by a gateway of that release, which wrote NULL for plain text), so
 * only those rows are ever parsed by the worker (docs/turns.md, "The stored command").
 */
export const plainTextCommand = 'text';

/**
 * The `inbound_events.command` value for a parse result: the command's name,
 * `busy:<mode>` for a `/busy` that names a mode, `schedules:cancel:<id>` or
 * `schedules:usage` for a `/schedules` with arguments, or `text`. These are
 * the only arguments any command reads, so the worker needs nothing else.
 */
export function storedCommandOf(command: ChatCommand | null): string {
  if (!command) return plainTextCommand;
  if (command.name === 'busy' && command.mode) return `busy:${command.mode}`;
  if (command.name === 'schedules') return storedSchedulesOf(command.action);
  return command.name;
}

function storedSchedulesOf(action: SchedulesAction): string {
  if (action.kind === 'cancel') return `schedules:cancel:${action.id}`;
  return action.kind === 'usage' ? 'schedules:usage' : 'schedules';
}

/**
 * The command of a stored row, from its `command` column; the text is parsed
 * only when the column was never written (NULL) or holds a value this
 * release does not know (written by a newer gateway): the text is then the
 * best evidence there is. Null: plain text, for the model.
 */
export function readStoredCommand(stored: string | null, text: string): StoredCommand | null {
  const decoded = stored === null ? undefined : decodeStoredCommand(stored);
  return decoded === undefined ? parseChatCommand(text) : decoded;
}

/** undefined: not a value storedCommandOf writes. */
function decodeStoredCommand(stored: string): StoredCommand | null | undefined {
  if (stored === plainTextCommand) return null;
  if (stored.startsWith('schedules')) return decodeStoredSchedules(stored);
  const [name, mode, ...rest] = stored.split(':');
  if (rest.length > 0) return undefined;
  if (name === 'busy') {
    if (mode === undefined) return { name: 'busy', mode: null };
    return (busyInputModes as readonly string[]).includes(mode) ? { name: 'busy', mode: mode as BusyInputModeName } : undefined;
  }
  if (mode !== undefined || !(chatCommandNames as readonly string[]).includes(name ?? '')) return undefined;
  return { name: name as PlainCommandName };
}

/** `schedules`, `schedules:usage`, `schedules:cancel:<id>`; undefined for anything else. */
function decodeStoredSchedules(stored: string): StoredCommand | undefined {
  if (stored === 'schedules') return { name: 'schedules', action: { kind: 'list' } };
  if (stored === 'schedules:usage') return { name: 'schedules', action: { kind: 'usage' } };
  const id = /^schedules:cancel:(.*)$/.exec(stored)?.[1] ?? '';
  return scheduleIdPattern.test(id) ? { name: 'schedules', action: { kind: 'cancel', id: Number(id) } } : undefined;
}
