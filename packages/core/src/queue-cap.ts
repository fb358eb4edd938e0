/**
 * The queued-input cap (docs/turns.md, "Busy input modes"): past
 * MAX_QUEUED_INPUT pending events a conversation's new input is refused
 * (stored `refused`, never run, the user told once). The decision is taken
 * inside the store's INSERT (packages/db, storeInboundEvent), where the count
 * and the insert are one atomic statement; the parameter comes from here, and
 * a db-level test checks the statement decides as `isOverQueueCap` does
 * (apps/worker/src/sql-rules.test.ts).
 */

/**
 * The cap an event is stored under: null (never refused) for /stop, which
 * must always work and makes the bot say one line at most; MAX_QUEUED_INPUT
 * for anything else, other commands included (issue 17).
 */
export function queueCapFor(signal: 'input' | 'stop' | 'none', maxQueuedInput: number): number | null {
  return signal === 'stop' ? null : maxQueuedInput;
}

/** Whether an event arriving with `waiting` pending events before it is refused under `cap`. */
export function isOverQueueCap(waiting: number, cap: number | null): boolean {
  return cap !== null && waiting >= cap;
}
