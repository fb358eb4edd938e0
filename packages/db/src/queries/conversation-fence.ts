import { sql } from 'drizzle-orm';
import type { DbExecutor } from './admin-executor.ts';

/** The error a turn ended by an operator's action records (`interrupted`: nothing committed, nothing counted). */
export const supersededByOperator = 'superseded_by_operator';

/**
 * The first statement of an operator's action that moves a conversation's
 * session (issue 20): locks the conversation's running turns, in the order a
 * commit locks rows (the turn before the conversation), so a commit already
 * under way finishes before the action goes on, and one that comes later
 * waits for it and then finds its turn or its session gone. Nothing is
 * changed yet: a refused action (not found, already suspended) leaves the
 * turn alone. Returns the locked turns, for supersedeTurns.
 */
export async function lockRunningTurns(executor: DbExecutor, conversationId: number): Promise<number[]> {
  const rows = await executor.execute<{ id: string }>(sql`
    select id from turns where conversation_id = ${conversationId} and status = 'running' order by id for update`);
  return rows.map((row) => Number(row.id));
}

/**
 * Ends turns an operator's action superseded (locked by lockRunningTurns in
 * the same transaction): their commit is refused (commitTurn's fence) and
 * their input stays pending for the next turn, in whatever session the
 * action left current. A turn that began after the lock is refused at its
 * commit by the session check and settled by the next lease holder.
 */
export async function supersedeTurns(executor: DbExecutor, turnIds: readonly number[]): Promise<void> {
  if (turnIds.length === 0) return;
  await executor.execute(sql`
    update turns set status = 'interrupted', error = ${supersededByOperator}, ended_at = now()
    where id = any(${`{${turnIds.join(',')}}`}::bigint[]) and status = 'running'`);
}

/**
 * The fence of a chat command's change (/new, /reset, /busy <mode>; issue 29,
 * defect 8), the first statement of the change's transaction: marks the
 * command's event applied, only while it is pending and not applied yet. A
 * second holding of the conversation (a lost lease) that reads the same
 * command finds it applied (or taken) and changes nothing; a crash before the
 * change commits leaves it unmarked, so whoever runs the command next applies it.
 */
export async function markCommandApplied(executor: DbExecutor, inboundEventId: number): Promise<boolean> {
  const rows = await executor.execute<{ id: string }>(sql`
    update inbound_events set command_applied_at = now()
    where id = ${inboundEventId} and status = 'pending' and command_applied_at is null
    returning id`);
  return rows.length === 1;
}
