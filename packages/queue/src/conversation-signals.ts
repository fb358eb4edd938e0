import type { RedisClient } from './redis-connection.ts';
import { z } from 'zod';
import { conversationLeaseKey } from './redis-lease.ts';

/**
 * A nudge to whichever worker runs a conversation's turn, on any machine:
 * `input` (a new message, which interrupts under busy mode `interrupt`) or
 * `stop` (/stop or an operator). Pub/sub is fire-and-forget, so a signal can
 * be missed only while no turn runs — and then the next turn reads the input
 * from Postgres anyway (docs/turns.md).
 */
export const conversationSignalSchema = z.object({
  kind: z.enum(['input', 'stop']),
  conversationId: z.number().int().positive(),
  /** The inbound event behind the signal (0 for operator stops, which stop whatever runs). */
  inboundEventId: z.number().int().nonnegative(),
  /** When the gateway stored the event (ms since epoch), to measure interrupt latency. */
  storedAt: z.number(),
});
export type ConversationSignal = z.infer<typeof conversationSignalSchema>;

export const signalChannel = (prefix: string) => `${prefix}:signals`;

// Only a lease holder can have a turn running or waiting, so a signal is
// published only while the conversation's lease is held: a message to an idle
// conversation then wakes no worker (every worker hears every signal). Safe
// against the holder arriving just after the check: the event was committed
// before this runs, and a new holder reads pending input only after taking
// the lease, so it finds the event itself (docs/turns.md, race 3).
const publishIfLeasedScript = `if redis.call('exists', KEYS[1]) == 1 then return redis.call('publish', ARGV[1], ARGV[2]) else return -1 end`;

/**
 * Sends `signal` to the worker holding the conversation. Resolves to false
 * when nobody holds it (nothing runs, so nothing was published).
 */
export async function publishSignal(redis: RedisClient, prefix: string, signal: ConversationSignal): Promise<boolean> {
  const sent = await redis.eval(publishIfLeasedScript, 1, conversationLeaseKey(prefix, signal.conversationId), signalChannel(prefix), JSON.stringify(signal));
  return sent !== -1;
}

/** Subscribes `subscriber` (a connection used for nothing else) to every conversation signal. */
export async function subscribeSignals(subscriber: RedisClient, prefix: string, onSignal: (signal: ConversationSignal) => void, onBadMessage?: (raw: string) => void): Promise<void> {
  const channel = signalChannel(prefix);
  subscriber.on('message', (from: string, raw: string) => {
    if (from !== channel) return;
    let parsed: ConversationSignal;
    try {
      parsed = conversationSignalSchema.parse(JSON.parse(raw));
    } catch {
      onBadMessage?.(raw);
      return;
    }
    onSignal(parsed);
  });
  await subscriber.subscribe(channel);
}
