import { setTimeout as sleep } from 'node:timers/promises';
import { claimOutboxRow, markOutboxFailed, releaseOutboxClaims, markOutboxSent, rescheduleOutbox, type Database, type OutboxRow } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import { PlatformError, type PlatformSender, type SentMessage } from '@switchboard/platforms';
import { persistWithRetry } from './persist-with-retry.ts';
import type { WorkerMetrics } from '../worker-metrics.ts';

export interface DeliveryDeps {
  db: Database;
  senders: Map<string, PlatformSender>;
  log: Logger;
  metrics?: Pick<WorkerMetrics, 'countDelivery' | 'countRateLimited'>;
  /** This lease holding's claim id (outboxClaimId), and the heartbeat silence after which a worker is dead: who may send a row. */
  claimId: string;
  deadAfterMs: number;
  /** HeartbeatHealth.mayAct: false after a stall that may have got this worker declared dead; the row is then left to the holder. */
  mayAct?: () => boolean;
}

/**
 * `sent`: every row went out (or failed for good). `later`: a row must wait
 * for its retry time. `elsewhere`: another live worker is sending a row (it
 * holds the conversation too, after a lost lease); it sends the rest in order.
 */
export type DeliveryOutcome = 'sent' | 'later' | 'elsewhere';

/** Longest platform-requested pause we sit through in-line; longer ones are rescheduled. */
const maxInlineWaitMs = 30_000;
const inlineRetries = 3;
/** After this many attempts across sweeps a row is failed for operators to see. */
const maxAttempts = 10;

/**
 * Sends a conversation's pending outbox rows (oldest first, as read with the
 * conversation's state or returned by the turn's commit) in order. Stops
 * at the first row that must wait, so a later part never
 * overtakes an earlier one; the recovery sweep brings the conversation back
 * when the row is due. The conversation's lease holder calls this, and each
 * row is claimed before it is sent, so a row is never sent twice at once even
 * by two workers that both believe they hold the conversation (a lost lease).
 * A turn's own reply parts come from its commit already claimed by this
 * worker, so the usual reply costs no extra statement.
 */
export async function deliverPendingOutbox(deps: DeliveryDeps, rows: readonly OutboxRowToSend[]): Promise<DeliveryOutcome> {
  for (const [index, row] of rows.entries()) {
    const outcome = await deliverInOrder(deps, row);
    if (outcome === 'sent') continue;
    // Stopping here: the rows not sent are left to whoever holds the conversation when they are due.
    await releaseOutboxClaims(deps.db, rows.slice(index).map((r) => r.id), deps.claimId);
    return outcome;
  }
  return 'sent';
}

/** One row, if it is due and this worker may send it: 'sent' also when it failed for good (the next row goes on). */
async function deliverInOrder(deps: DeliveryDeps, row: OutboxRowToSend): Promise<DeliveryOutcome> {
  // A row never tried is due whatever the clocks say; a retry waits for its time.
  if (row.attempts > 0 && row.nextAttemptAt.getTime() > Date.now()) return 'later';
  if (row.claimedBy !== deps.claimId && !(await claimOutboxRow(deps.db, row.id, deps.claimId, deps.deadAfterMs))) return 'elsewhere';
  // Just before the platform call: a worker frozen past its peers' patience must not repeat a send the new holder made.
  if (deps.mayAct && !deps.mayAct()) return 'elsewhere';
  const sender = deps.senders.get(row.platform);
  if (!sender) {
    await markOutboxFailed(deps.db, row.id, `platform ${row.platform} is not configured`);
    deps.metrics?.countDelivery(row.platform, 'failed');
    return 'sent';
  }
  return (await deliverOne(deps, sender, row)) === 'later' ? 'later' : 'sent';
}

export type OutboxRowToSend = Pick<OutboxRow, 'id' | 'platform' | 'target' | 'chunkIndex' | 'text' | 'attempts' | 'conversationId' | 'nextAttemptAt' | 'claimedBy'> &
  Partial<Pick<OutboxRow, 'streamed' | 'platformMessageId' | 'buttons'>>;

/**
 * The key a platform dedupes a resend by (Discord's nonce): a row is one part
 * of one reply and its id never changes, so every process that sends the row,
 * before or after a restart, sends the same key. `sb` + a bigint id is at
 * most 21 characters, inside Discord's 25.
 */
export function outboxIdempotencyKey(row: Pick<OutboxRow, 'id'>): string {
  return `sb${row.id}`;
}

async function deliverOne(
  deps: DeliveryDeps,
  sender: PlatformSender,
  row: OutboxRowToSend,
): Promise<'sent' | 'failed' | 'later'> {
  for (let attempt = 0; ; attempt++) {
    try {
      const sent = await sendRow(sender, row);
      await persistWithRetry(() => markOutboxSent(deps.db, row.id, sent.platformMessageId), deps.log, `outbox ${row.id} sent`);
      deps.metrics?.countDelivery(row.platform, 'sent');
      return 'sent';
    } catch (error) {
      if (!(error instanceof PlatformError)) throw error;
      if (error.code === 'RATE_LIMITED') deps.metrics?.countRateLimited(row.platform);
      const totalAttempts = row.attempts + attempt + 1;
      const log = { outboxId: row.id, conversationId: row.conversationId, code: error.code, attempt: totalAttempts };
      if (!error.retryable || totalAttempts >= maxAttempts) {
        deps.log.warn(log, 'delivery failed for good');
        await markOutboxFailed(deps.db, row.id, `${error.code}: ${error.message}`);
        deps.metrics?.countDelivery(row.platform, 'failed');
        return 'failed';
      }
      const waitMs = error.retryAfterMs ?? backoffWithJitter(attempt);
      if (attempt >= inlineRetries || waitMs > maxInlineWaitMs) {
        deps.log.warn({ ...log, waitMs }, 'delivery postponed');
        await rescheduleOutbox(deps.db, row.id, `${error.code}: ${error.message}`, waitMs);
        deps.metrics?.countDelivery(row.platform, 'postponed');
        return 'later';
      }
      deps.log.info({ ...log, waitMs }, 'delivery retrying');
      deps.metrics?.countDelivery(row.platform, 'retrying');
      await sleep(waitMs);
    }
  }
}

/**
 * A row is posted, except the first part of a streamed reply (docs/turns.md
 * "Streaming replies"): its message exists already, and gets its final text
 * by an edit, which a retry may repeat harmlessly. A streamed row whose
 * message id was never recorded (the worker died right after the post) is
 * posted with the row's key and then edited, so on Discord the post returns
 * the message already made and the edit completes it. An edit the platform
 * refuses (the user deleted the message) posts the text anew.
 */
async function sendRow(sender: PlatformSender, row: OutboxRowToSend): Promise<SentMessage> {
  const options = { idempotencyKey: outboxIdempotencyKey(row), partIndex: row.chunkIndex };
  // A part with buttons (a `/schedules` list) is never streamed: it is a command's reply.
  if (row.buttons && row.buttons.length > 0 && sender.sendWithButtons) return sender.sendWithButtons(row.target, row.text, row.buttons, options);
  if (!row.streamed || !sender.editText) return sender.sendText(row.target, row.text, options);
  if (row.platformMessageId) {
    try {
      await sender.editText(row.target, row.platformMessageId, row.text, options);
      return { platformMessageId: row.platformMessageId };
    } catch (error) {
      if (!(error instanceof PlatformError && error.code === 'REJECTED')) throw error;
      return sender.sendText(row.target, row.text, options);
    }
  }
  const sent = await sender.sendText(row.target, row.text, options);
  // Only Discord can have returned an older message here; elsewhere the post already carries the text, so a failed edit changes nothing.
  await sender.editText(row.target, sent.platformMessageId, row.text, options).catch(() => undefined);
  return sent;
}

function backoffWithJitter(attempt: number): number {
  const base = 250 * 2 ** attempt;
  return Math.round(base / 2 + Math.random() * base);
}
