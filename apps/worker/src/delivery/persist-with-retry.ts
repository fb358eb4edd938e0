import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@switchboard/logger';

/**
 * Retries a Postgres write that records something already done outside
 * (a message the platform accepted). Giving up early would make the row look
 * undone and send the reply twice, so this outlasts a Postgres restart; only
 * a crash of this process in that window can still cause a resend.
 */
export async function persistWithRetry(write: () => Promise<void>, log: Logger, what: string, deadlineMs = 120_000): Promise<void> {
  const giveUpAt = Date.now() + deadlineMs;
  for (let attempt = 0; ; attempt++) {
    try {
      await write();
      return;
    } catch (error) {
      if (Date.now() >= giveUpAt) throw error;
      if (attempt === 0) log.warn({ err: error, what }, 'could not record a delivered message yet; retrying');
      await sleep(Math.min(100 * 2 ** attempt, 2000));
    }
  }
}
