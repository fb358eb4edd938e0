import type { StoreDeadline } from '@switchboard/db';
import { PlatformError, type InboundMessage } from '@switchboard/platforms';
import { acceptInbound, IngressError, type IngressDeps, type IngressOutcome } from './accept-inbound.ts';

/** A parse result that carries a message to store (Slack and Telegram `message`, a Discord slash `command`). */
type Carrying<T> = Extract<T, { message: InboundMessage }>;
/** A parse result with nothing to store (`ignored`, a Discord `ping` or `unsupported` interaction). */
type NotCarrying<T> = Exclude<T, { message: InboundMessage }>;

/**
 * What became of one inbound event, as a value each ingress path maps to its
 * own answer (an HTTP status, a log line, moving a poll offset or not).
 * `malformed`: the platform's parser refused it. `skipped`: parsed, nothing to
 * store. `not_accepted`: storing or enqueueing failed (IngressError's code says which).
 */
export type Ingested<T> =
  | { kind: 'malformed'; error: PlatformError }
  | { kind: 'skipped'; parsed: NotCarrying<T> }
  | { kind: 'accepted'; message: InboundMessage; outcome: IngressOutcome }
  | { kind: 'not_accepted'; message: InboundMessage; error: IngressError };

/**
 * The one parse → accept → map-errors step the five ingress paths share.
 * `parse` is the platform's parser applied to the event; a PlatformError it
 * throws is `malformed`, anything else is a bug and is rethrown (as is an
 * error of acceptInbound that is not an IngressError).
 */
export async function ingestInbound<T extends { kind: string }>(deps: IngressDeps, parse: () => T, deadline?: StoreDeadline): Promise<Ingested<T>> {
  const parsed = parseInbound(parse);
  return parsed.kind === 'message' ? acceptParsed(deps, parsed.message, deadline) : parsed;
}

/** The parse half of ingestInbound, for a caller that accepts in its own way (Discord's connection retries a failed store in place). */
export function parseInbound<T extends { kind: string }>(
  parse: () => T,
): { kind: 'malformed'; error: PlatformError } | { kind: 'skipped'; parsed: NotCarrying<T> } | { kind: 'message'; message: InboundMessage } {
  let parsed: T;
  try {
    parsed = parse();
  } catch (error) {
    if (error instanceof PlatformError) return { kind: 'malformed', error };
    throw error;
  }
  return carriesMessage(parsed) ? { kind: 'message', message: parsed.message } : { kind: 'skipped', parsed: parsed as NotCarrying<T> };
}

/** acceptInbound with its expected failures as values. */
export async function acceptParsed(
  deps: IngressDeps,
  message: InboundMessage,
  deadline?: StoreDeadline,
): Promise<{ kind: 'accepted'; message: InboundMessage; outcome: IngressOutcome } | { kind: 'not_accepted'; message: InboundMessage; error: IngressError }> {
  try {
    return { kind: 'accepted', message, outcome: await acceptInbound(deps, message, deadline) };
  } catch (error) {
    if (error instanceof IngressError) return { kind: 'not_accepted', message, error };
    throw error;
  }
}

function carriesMessage<T>(parsed: T): parsed is Carrying<T> {
  return typeof parsed === 'object' && parsed !== null && 'message' in parsed && typeof (parsed as { message: unknown }).message === 'object';
}
