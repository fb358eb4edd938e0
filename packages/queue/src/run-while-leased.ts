import type { RedisLease } from './redis-lease.ts';

/**
 * Why a held lease stopped being this run's. `refused`: a renewal found the
 * key under another owner (or gone, and not taken back). `unconfirmed`:
 * renewals kept failing (Redis unreachable) for a whole TTL, so another
 * process may hold it by now.
 */
export type LeaseLoss = 'refused' | 'unconfirmed';

/** What the work sees of the lease it runs under. */
export interface LeaseHold {
  /** Aborts once the lease is lost; never on a normal finish. */
  readonly signal: AbortSignal;
  /** The lease's owner token (its holder prefix included). */
  readonly owner: string;
  /** Renews the lease now; false once it is no longer ours. A false here is the caller's to act on: it does not count as a loss. */
  confirm(): Promise<boolean>;
}

export interface RunWhileLeasedOptions {
  /** How often the lease is renewed; a third of its TTL unless given. */
  renewEveryMs?: number;
  /**
   * The caller's reaction to losing the lease: called once, before `signal`
   * aborts. Renewals stop with it: once lost, the lease stays lost for this
   * run, and the work is expected to wind up.
   */
  onLost?: (loss: LeaseLoss) => void;
  /** A renewal that failed (not one that was refused); the run goes on until failures last a whole TTL. */
  onRenewError?: (err: unknown) => void;
  /**
   * Runs right after the lease is taken, and again after a retake
   * (`retakeVanished`): false gives the lease back (a retake that cannot be
   * claimed is a loss). For state fenced by the holder, claimed with the lease.
   */
  claim?: () => Promise<boolean>;
  /**
   * A renewal that finds no key at all (Redis restarted empty) takes the
   * lease again (SET NX) instead of counting it lost, so the work goes on
   * without a handover. Only for work whose own state survives in Postgres
   * (`claim` fences it): a conversation's turn does not.
   */
  retakeVanished?: boolean;
  /** Called after a vanished lease was taken back (and claimed). */
  onRetaken?: () => void;
  /** A failed release: without it the error is thrown to the caller. The lease expires by itself in one TTL. */
  onReleaseError?: (err: unknown) => void;
}

/** `not_taken`: another holder has the lease (or `claim` refused); the work did not run. */
export type LeasedRun<T> = { kind: 'not_taken' } | { kind: 'finished'; value: T; lost: LeaseLoss | undefined };

/**
 * The one lease loop (issue 20): takes `lease`, runs `work` while renewing
 * it, reacts to its loss through `onLost` and the hold's signal, and releases
 * it when the work finishes, returns or throws. The release is
 * compare-and-delete, so it is harmless after a loss: another holder's lease
 * stays. What a loss means is the caller's: a turn stops, a gateway
 * connection disconnects, a poller stops polling.
 */
export async function runWhileLeased<T>(lease: RedisLease, work: (hold: LeaseHold) => Promise<T>, options: RunWhileLeasedOptions = {}): Promise<LeasedRun<T>> {
  if (!(await lease.tryAcquire())) return { kind: 'not_taken' };
  if (!(await claimOrRelease(lease, options))) return { kind: 'not_taken' };
  const keeper = keepLease(lease, options);
  try {
    const value = await work(keeper.hold);
    return { kind: 'finished', value, lost: keeper.lost() };
  } finally {
    await keeper.stop();
    await releaseLease(lease, options);
  }
}

interface LeaseKeeper {
  hold: LeaseHold;
  lost(): LeaseLoss | undefined;
  /** Stops renewing, after the renewal in flight (a retake must not land after the release). */
  stop(): Promise<void>;
}

/**
 * Renews one after another (never two renewals in flight), so a renewal
 * that waits for Redis to come back is not joined by a pile of others.
 */
function keepLease(lease: RedisLease, options: RunWhileLeasedOptions): LeaseKeeper {
  const controller = new AbortController();
  const everyMs = options.renewEveryMs ?? Math.floor(lease.ttlMs / 3);
  let confirmedAt = Date.now();
  let lost: LeaseLoss | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let renewing: Promise<void> | undefined;

  const lose = (loss: LeaseLoss) => {
    if (lost || stopped) return;
    lost = loss;
    try {
      options.onLost?.(loss);
    } finally {
      controller.abort();
    }
  };
  const renew = async () => {
    try {
      if (await renewOrRetake(lease, options)) confirmedAt = Date.now();
      else lose('refused');
    } catch (err) {
      options.onRenewError?.(err);
      if (Date.now() - confirmedAt >= lease.ttlMs) lose('unconfirmed');
    }
  };
  const schedule = () => {
    if (stopped || lost) return;
    timer = setTimeout(() => {
      renewing = renew().finally(() => {
        renewing = undefined;
        schedule();
      });
    }, everyMs);
  };
  schedule();

  return {
    hold: {
      signal: controller.signal,
      owner: lease.owner,
      async confirm() {
        const held = await lease.renew();
        if (held) confirmedAt = Date.now();
        return held;
      },
    },
    lost: () => lost,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await renewing;
    },
  };
}

/** One renewal: true while the lease is ours, or once a vanished one is taken back (`retakeVanished`). Throws when Redis did not answer. */
async function renewOrRetake(lease: RedisLease, options: RunWhileLeasedOptions): Promise<boolean> {
  if (await lease.renew()) return true;
  if (!options.retakeVanished || !(await retakeLease(lease, options))) return false;
  options.onRetaken?.();
  return true;
}

/** Takes a lease whose key is gone back under the same owner, and claims it again. */
async function retakeLease(lease: RedisLease, options: RunWhileLeasedOptions): Promise<boolean> {
  return (await lease.tryAcquire()) && (await claimOrRelease(lease, options));
}

/** A lease just taken is given back unless `claim` (if any) says yes: a claim that refuses or throws leaves nothing held. */
async function claimOrRelease(lease: RedisLease, options: RunWhileLeasedOptions): Promise<boolean> {
  if (!options.claim) return true;
  let claimed = false;
  try {
    claimed = await options.claim();
    return claimed;
  } finally {
    if (!claimed) await releaseLease(lease, options);
  }
}

async function releaseLease(lease: RedisLease, options: RunWhileLeasedOptions): Promise<void> {
  try {
    await lease.release();
  } catch (err) {
    if (!options.onReleaseError) throw err;
    options.onReleaseError(err);
  }
}
