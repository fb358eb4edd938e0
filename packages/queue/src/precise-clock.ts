/**
 * Milliseconds since the epoch with microseconds. A wake-up job carries the
 * moment its event was stored, and the worker and the bench compare it with
 * other processes' clocks on the same machine: Date.now()'s whole
 * milliseconds are too coarse for hand-offs that take a fraction of one.
 * Wall-clock based (timeOrigin), so it lines up across processes. The
 * simulator keeps its own copy: it may import no package of ours but config
 * and logger (apps/sim/README.md).
 */
export function preciseNow(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000;
}
