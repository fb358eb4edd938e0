import type { BusyInputModeName } from './busy-mode.ts';
import { busyInputModes } from './busy-mode.ts';

export const chatCommandNames = ['new', 'reset', 'stop', 'status', 'busy', 'compact', 'help', 'approve', 'deny'] as const;
export type ChatCommandName = (typeof chatCommandNames)[number];

export type ChatCommand =
  | { name: Exclude<ChatCommandName, 'busy'>; args: string }
  | { name: 'busy'; args: string; mode: BusyInputModeName | null };

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
  return { name: name as Exclude<ChatCommandName, 'busy'>, args };
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
