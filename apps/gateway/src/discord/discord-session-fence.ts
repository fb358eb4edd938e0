import { claimDiscordSessionHold, loadDiscordSession, saveDiscordSession, type Database } from '@switchboard/db';
import type { Logger } from '@switchboard/logger';
import type { DiscordSessionStore } from '@switchboard/platforms';

/** Sessions outlive a connection by a few minutes on Discord; an older stored one would only earn an op 9. */
const sessionTtlMs = 10 * 60_000;

/**
 * The Discord Gateway session (id, resume URL, last stored sequence) in
 * Postgres, fenced by a holder epoch claimed with the connection lease.
 * Redis may come back empty: the lease can be re-taken, the session could
 * not, so it lives in Postgres, and a process that has lost the connection
 * cannot overwrite the session of the one that claimed it since.
 */
export interface DiscordSessionFence {
  /** What the gateway connection loads and saves its session through; saves carry this process's epoch. */
  readonly store: DiscordSessionStore;
  /** This process's fencing token for session writes, claimed each time it takes the lease. */
  readonly epoch: number;
  /** Claims a new epoch (with the lease, and again when a vanished lease is taken back); false gives the lease back for a later try. */
  claim(): Promise<boolean>;
}

export function createDiscordSessionFence(deps: { db: Database; tokenId: string; log: Logger }): DiscordSessionFence {
  const { db, tokenId, log } = deps;
  let epoch = 0;
  return {
    get epoch() {
      return epoch;
    },
    store: {
      load: () => loadDiscordSession(db, tokenId, sessionTtlMs),
      async save(session) {
        const written = await saveDiscordSession(db, tokenId, epoch, session);
        // Another process has claimed the connection since; the next lease check disconnects this one.
        if (!written) log.debug({ holderEpoch: epoch }, 'discord gateway session not saved: another process has claimed the connection since');
      },
    },
    async claim() {
      try {
        epoch = await claimDiscordSessionHold(db, tokenId);
        return true;
      } catch (err) {
        log.warn({ err }, 'discord gateway lease taken but the session could not be claimed in Postgres; trying again later');
        return false;
      }
    },
  };
}
