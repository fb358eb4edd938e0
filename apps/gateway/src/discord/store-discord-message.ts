import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@switchboard/logger';
import { discordThreadChannelTypes, parseDiscordMessage, type DiscordDispatch, type DiscordParseContext, type InboundMessage } from '@switchboard/platforms';
import { IngressError, type IngressDeps } from '../ingress/accept-inbound.ts';
import { acceptParsed, parseInbound } from '../ingress/ingest-inbound.ts';

/** Threads the bot was brought into, kept so later messages there need no mention; bounded, oldest forgotten first. */
const maxRememberedThreads = 10_000;
/** A brief store failure is retried in place before the connection is made to resume (which replays the event). */
const storeRetryDelaysMs = [250, 1000];

export interface DiscordMessageDeps {
  ingress: IngressDeps;
  log: Logger;
  /** The bot's identity (set on READY) and the threads it was brought into (`botThreadIds`, kept here). */
  context: DiscordParseContext & { botThreadIds: Set<string> };
  /** Aborts when the process closes: a failed store is then not retried. */
  closing: AbortSignal;
}

/**
 * Handles one Gateway dispatch: a MESSAGE_CREATE is stored once (deduped on
 * the message id, so replays after a resume are harmless) and enqueued;
 * anything else is ignored. Throws when the message could not be stored, so
 * the connection resumes from the last stored event and Discord replays it.
 */
export async function storeDiscordDispatch(deps: DiscordMessageDeps, event: DiscordDispatch): Promise<void> {
  if (event.t !== 'MESSAGE_CREATE') return;
  const { log } = deps;
  const parsed = parseInbound(() => parseDiscordMessage(event.d, deps.context));
  if (parsed.kind === 'malformed') {
    log.warn({ code: parsed.error.code, reason: parsed.error.message, s: event.s }, 'discord message ignored: malformed');
    return;
  }
  if (parsed.kind === 'skipped') {
    log.debug({ reason: parsed.parsed.kind === 'ignored' ? parsed.parsed.reason : parsed.parsed.kind, s: event.s }, 'discord message ignored');
    return;
  }
  const channelType = (event.d as { channel_type?: unknown }).channel_type;
  if (typeof channelType === 'number' && discordThreadChannelTypes.has(channelType)) rememberThread(deps.context.botThreadIds, parsed.message.address.chatId);
  await storeWithRetries(deps, parsed.message);
}

async function storeWithRetries(deps: DiscordMessageDeps, message: InboundMessage): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    let failure: unknown;
    try {
      const accepted = await acceptParsed(deps.ingress, message);
      if (accepted.kind === 'accepted') return;
      if (accepted.error.code === 'ENQUEUE_FAILED') {
        // Stored: the recovery sweep hands it to a worker once Redis is back.
        deps.log.warn({ err: accepted.error.cause, eventId: message.eventId }, 'discord message stored but not enqueued; the sweep will pick it up');
        return;
      }
      failure = accepted.error;
    } catch (error) {
      failure = error;
    }
    const delay = storeRetryDelaysMs[attempt];
    if (delay === undefined || deps.closing.aborted) throw failure;
    deps.log.warn({ err: failure instanceof IngressError ? failure.cause : failure, eventId: message.eventId, attempt }, 'discord message not stored; retrying');
    await sleep(delay);
  }
}

function rememberThread(threads: Set<string>, channelId: string): void {
  threads.delete(channelId);
  threads.add(channelId);
  if (threads.size > maxRememberedThreads) threads.delete(threads.values().next().value as string);
}
