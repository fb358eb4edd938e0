import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisLease } from './redis-lease.ts';
import { runWhileLeased, type LeaseHold, type RunWhileLeasedOptions } from './run-while-leased.ts';

export interface RunAsLeaderOptions extends RunWhileLeasedOptions {
  lease: RedisLease;
  /**
   * Stops the loop for good (the process is closing): no new try starts, the
   * wait between tries ends, and the leader's `hold.signal` aborts.
   */
  stop: AbortSignal;
  /**
   * The leader's work, run each time the lease is taken. Its `hold.signal`
   * aborts when the lease is lost or `stop` aborts, and the work is expected
   * to wind up then; it may also return by itself (say, after a false
   * `hold.confirm()`), and the loop tries to take the lease again at once.
   */
  lead: (hold: LeaseHold) => Promise<void>;
  /** The wait after a try that did not take the lease (or failed); `renewEveryMs`, else a third of the TTL. */
  retryEveryMs?: number;
  /** A try that did not take the lease: another process holds it, or `claim` refused. */
  onNotTaken?: () => void;
  /**
   * A try that threw (taking, claiming or releasing the lease, or the work
   * itself): the loop waits and tries again. Without it the error ends the
   * loop and `runAsLeader` rejects with it.
   */
  onError?: (err: unknown) => void;
}

/**
 * The one leader loop (issue 32): for work that one process at a time must
 * do (the Discord Gateway connection, the Telegram poller), every process
 * runs this loop, and whoever takes the lease leads. It takes the lease, runs
 * `lead` while holding it (`runWhileLeased`: renewed, lost on a refused or
 * unconfirmed renewal, taken back when it vanished if `retakeVanished`), and
 * when that term ends tries again at once: a lost lease is usually held by
 * another process by then, but a lease lost with a Redis that restarted empty
 * is free, and the leader should lead again without a pause. While another
 * process holds the lease it tries every `retryEveryMs`, so a dead leader is
 * replaced within about one TTL. Resolves once `stop` aborts and the term in
 * progress has ended (the lease released).
 */
export async function runAsLeader(options: RunAsLeaderOptions): Promise<void> {
  const { lease, stop, lead } = options;
  const retryEveryMs = options.retryEveryMs ?? options.renewEveryMs ?? Math.floor(lease.ttlMs / 3);
  const leadUntilStopped = (hold: LeaseHold) => lead({ ...hold, signal: AbortSignal.any([hold.signal, stop]) });
  while (!stop.aborted) {
    const tookLease = await tryToLead(options, leadUntilStopped);
    if (!tookLease) await sleep(retryEveryMs, undefined, { signal: stop }).catch(() => undefined);
  }
}

/** One try: true when the lease was taken and a term ran to its end. */
async function tryToLead(options: RunAsLeaderOptions, lead: (hold: LeaseHold) => Promise<void>): Promise<boolean> {
  try {
    const run = await runWhileLeased(options.lease, lead, options);
    if (run.kind === 'finished') return true;
    options.onNotTaken?.();
    return false;
  } catch (err) {
    if (!options.onError) throw err;
    options.onError(err);
    return false;
  }
}
