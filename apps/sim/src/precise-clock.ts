/**
 * Milliseconds since the epoch with microseconds: the bench compares the
 * simulator's timestamps with each other and with Postgres' `now()`, and
 * Date.now()'s whole milliseconds are too coarse for steps that take one or
 * two of them. Wall-clock based (timeOrigin), so it lines up with other
 * processes' clocks on the same machine.
 */
export function preciseNow(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000;
}
