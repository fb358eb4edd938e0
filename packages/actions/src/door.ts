import { markCommandApplied, type Database, type DbExecutor } from '@switchboard/db';

/**
 * Who acts. A chat command runs inside the work loop of the worker holding
 * the conversation's lease, so no turn runs beside it. An operator acts from
 * outside the lease: a change of session is fenced like a commit (a running
 * turn is superseded, its commit refused, its input run again in the session
 * left current), and `record` writes the audit row in the action's own
 * transaction, with what happened.
 *
 * A chat command names its event (`inboundEventId`): the change is applied
 * only if that event is still pending and was not applied before
 * (markCommandApplied, in the change's transaction), so a holding that lost
 * the lease and runs the same command again changes nothing
 * (`already_applied`).
 */
export type Door<T> = ChatDoor | { kind: 'operator'; record: (tx: DbExecutor, outcome: T, supersededTurnIds: number[]) => Promise<void> };

export type ChatDoor = { kind: 'chat'; inboundEventId?: number };

/** A chat command whose change another holding already applied (or whose event it took): nothing changed. */
export type AlreadyApplied = { kind: 'already_applied' };

/** A chat command's change, applied once per event (Door): a command without an event is applied as it is. */
export async function changeOnce<T>(db: Database, door: ChatDoor, change: (tx: DbExecutor) => Promise<T>): Promise<T | AlreadyApplied> {
  const { inboundEventId } = door;
  if (inboundEventId === undefined) return change(db);
  return db.transaction(async (tx) => ((await markCommandApplied(tx, inboundEventId)) ? change(tx) : { kind: 'already_applied' as const }));
}
