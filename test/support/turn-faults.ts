import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from '@switchboard/queue';
import type { ManagedProcess } from '@switchboard/harness';
import { liveWorkers, resumeNotes } from './restart-helpers.ts';
import type { TestSystem } from './system.ts';
import { recoveryNoteIndexes, type ChatSnapshot, type ModelRequest, type StoredTurn } from './turn-helpers.ts';
import type { Random } from './turn-random.ts';

/**
 * The process faults of the randomized turn scenarios: a worker process
 * stopped with SIGTERM (drained, then its running turns cut off) or killed
 * with SIGKILL (found dead by its heartbeat), and replaced by a new process,
 * while a batch of conversations plays. And the lease a Redis failover loses.
 */

export interface ProcessFault {
  /** After the previous fault's replacement worker is ready (the first: after the batch started). */
  afterMs: number;
  /** SIGSTOP: a stall. The worker is frozen for `stallMs`, past WORKER_DEAD_AFTER_MS, then resumed with SIGCONT and not replaced. */
  signal: 'SIGTERM' | 'SIGKILL' | 'SIGSTOP';
  stallMs?: number;
}

/**
 * 0–2 process faults per batch. A conversation lives in one batch, so it is
 * cut off at most twice between completed replies: below the restart
 * threshold (3), which keeps the end state defined (active, counter 0).
 */
export function generateFaults(random: Random): ProcessFault[] {
  const plans: [readonly ProcessFault['signal'][], number][] = [
    [[], 25],
    [['SIGTERM'], 25],
    [['SIGKILL'], 25],
    [['SIGTERM', 'SIGKILL'], 15],
    [['SIGKILL', 'SIGTERM'], 10],
  ];
  // Stalls (issue 29, defect 3): a worker stopped past WORKER_DEAD_AFTER_MS, then resumed. TURN_STALLS=off leaves them out.
  if (process.env.TURN_STALLS !== 'off') plans.push([['SIGSTOP'], 20], [['SIGSTOP', 'SIGKILL'], 10]);
  const plan = random.weighted(plans);
  // A stall from just past WORKER_DEAD_AFTER_MS (2.5 s) to past the lease TTL (5 s): declared dead, sometimes its leases gone too.
  return plan.map((signal) => ({ signal, afterMs: random.int(200, 2500), ...(signal === 'SIGSTOP' ? { stallMs: random.int(3500, 6500) } : {}) }));
}

export function describeFaults(faults: ProcessFault[]): string {
  return faults.length === 0 ? 'no process faults' : faults.map((f) => `+${f.afterMs}ms ${f.signal}${f.stallMs ? ` for ${f.stallMs}ms` : ''}`).join(', ');
}

/** Whether a plan can cost a conversation its lease: a stall past the lease TTL, or a declared-dead worker's turns taken over while it runs. */
export function stallsWorker(faults: ProcessFault[]): boolean {
  return faults.some((f) => f.signal === 'SIGSTOP');
}

/**
 * How long a replacement worker may take to start: it starts at a batch's
 * busiest moment (forty conversations, Codex children, the other worker's
 * load, two cores), where it has taken 37 s (SEED=101, batch 1).
 */
const replacementStartMs = 60_000;

/** The pid in a worker id (`<hostname>-<pid>-<random>`, docs/restarts.md "Liveness"). */
function pidOf(workerId: string): number {
  return Number(workerId.split('-').at(-2));
}

/**
 * Plays a batch's faults in order. Each hits the live worker process with the
 * most running turns of the batch (so a turn really is cut off mid-way, when
 * one runs), waits for it to exit and starts a replacement. Returns one line
 * per fault, for the log and a failure message.
 */
export async function injectFaults(system: TestSystem, faults: ProcessFault[], chatIds: number[]): Promise<string[]> {
  const done: string[] = [];
  for (const fault of faults) {
    await sleep(fault.afterMs);
    const running = await system.sql<{ worker_id: string; n: number }[]>`
      select t.worker_id, count(*)::int as n from turns t join conversations c on c.id = t.conversation_id
      where t.status = 'running' and c.chat_id in ${system.sql(chatIds.map(String))} group by t.worker_id`;
    const turnsOf = (w: ManagedProcess) => running.find((r) => pidOf(r.worker_id) === w.child.pid)?.n ?? 0;
    const target = liveWorkers(system).sort((a, b) => turnsOf(b) - turnsOf(a))[0];
    if (!target) throw new Error('no live worker process to stop');
    const turns = turnsOf(target);
    if (fault.signal === 'SIGSTOP') {
      done.push(await stallWorker(system, target, { stallMs: fault.stallMs ?? 4000, turns }));
      continue;
    }
    const started = performance.now();
    await target.stop(fault.signal);
    const stopMs = Math.round(performance.now() - started);
    await system.addWorker(true, replacementStartMs);
    done.push(`${fault.signal} worker pid ${target.child.pid} with ${turns} running turns (exited in ${stopMs} ms), replaced`);
  }
  return done;
}

/** How long a stalled worker declared dead may take to notice and exit once it runs again (its next heartbeat, 250 ms here). */
const zombieExitMs = 5000;

/**
 * Freezes a worker process for `stallMs` (SIGSTOP), then lets it run on
 * (SIGCONT): a long GC or CPU stall. A worker its peer declared dead
 * meanwhile exits on its next heartbeat with code 75 (docs/restarts.md
 * "Declared dead"); it is replaced, as a supervisor would. One that exits
 * any other way is reported, so the batch fails; one not declared dead runs on.
 */
async function stallWorker(system: TestSystem, target: ManagedProcess, stall: { stallMs: number; turns: number }): Promise<string> {
  const pid = target.child.pid ?? -1;
  process.kill(pid, 'SIGSTOP');
  try {
    // The stall itself is the fault under test: a fixed time, not a wait for an event.
    await sleep(stall.stallMs);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  const line = `SIGSTOP worker pid ${pid} with ${stall.turns} running turns for ${stall.stallMs} ms, then SIGCONT`;
  const exit = await Promise.race([
    new Promise<number | null>((resolve) => (target.child.exitCode !== null ? resolve(target.child.exitCode) : target.child.once('exit', (code) => resolve(code)))),
    sleep(zombieExitMs).then(() => 'running' as const),
  ]);
  if (exit === 'running') return `${line}; it ran on (not declared dead)`;
  await system.addWorker(true, replacementStartMs);
  return `${line}; it exited with code ${exit}${exit === 75 ? ' (declared dead)' : ' (UNEXPECTED EXIT)'}, replaced`;
}

/** Deletes a conversation's lease key, as a Redis restart or failover loses it: the holder learns it at its next renewal. */
export async function dropLease(system: TestSystem, redis: RedisClient, chatId: number): Promise<void> {
  const [row] = await system.sql<{ id: number }[]>`select id::int as id from conversations where chat_id = ${String(chatId)}`;
  if (row) await redis.del(`${system.redisPrefix}:lease:conversation:${row.id}`);
}

/** What a batch's faults did, summed over its conversations: logged, so a run shows it exercised what it claims. */
export interface FaultCoverage {
  compressions: number;
  cutOffs: number;
  superseded: number;
  refused: number;
  resumeNotes: number;
  recoveryNotes: number;
  /** Turns stopped (interrupted, cancelled, cut off, superseded) while they compressed. */
  stoppedDuringSummary: number;
  /** Conversations on the Codex runtime, and how their questions ended (addCodexCoverage, turn-codex-record.ts). */
  codexConversations: number;
  /** Questions the user answered (a text command sent, or a button press the sim took), whatever the answer met. */
  userAnswers: number;
  approvalsApproved: number;
  approvalsRefused: number;
  approvalsTimedOut: number;
  approvalsCancelled: number;
  /** Left pending by a turn that was cut off while it waited (its worker died). */
  approvalsLeftPending: number;
}

export function emptyCoverage(): FaultCoverage {
  return {
    compressions: 0,
    cutOffs: 0,
    superseded: 0,
    refused: 0,
    resumeNotes: 0,
    recoveryNotes: 0,
    stoppedDuringSummary: 0,
    codexConversations: 0,
    userAnswers: 0,
    approvalsApproved: 0,
    approvalsRefused: 0,
    approvalsTimedOut: 0,
    approvalsCancelled: 0,
    approvalsLeftPending: 0,
  };
}

/** `summaries`: the summariser's requests for this chat (its turns' requests are `requests`). */
export function addCoverage(coverage: FaultCoverage, snapshot: ChatSnapshot, requests: ModelRequest[], summaries: ModelRequest[]): void {
  coverage.compressions += snapshot.messages.filter((m) => m.kind === 'summary').length;
  coverage.cutOffs += snapshot.turns.filter((t) => t.error === 'cut_off_by_restart').length;
  coverage.superseded += snapshot.turns.filter((t) => t.error === 'lease_lost').length;
  coverage.refused += snapshot.events.filter((e) => e.status === 'refused').length;
  coverage.resumeNotes += requests.filter((r) => resumeNotes(r) > 0).length;
  coverage.recoveryNotes += requests.filter((r) => recoveryNoteIndexes(r).length > 0).length;
  // A turn stopped during its compression ends once the summary is committed (docs/compression.md "Interrupts"):
  // a stopped turn whose span holds a summariser request. Approximate (the sim's clock lags under load), for the log only.
  const stopped = snapshot.turns.filter((t) => t.status !== 'completed' && t.ended_at);
  const holds = (t: StoredTurn, r: ModelRequest) => t.started_at.getTime() <= r.receivedAt && r.receivedAt <= (t.ended_at?.getTime() ?? 0);
  coverage.stoppedDuringSummary += stopped.filter((t) => summaries.some((r) => holds(t, r))).length;
}

export function describeCoverage(c: FaultCoverage): string {
  const codex = `${c.codexConversations} Codex conversations (${c.userAnswers} answers sent; questions: ${c.approvalsApproved} approved, ${c.approvalsRefused} refused, ${c.approvalsTimedOut} timed out, ${c.approvalsCancelled} withdrawn, ${c.approvalsLeftPending} left pending by a cut-off turn)`;
  return `${c.compressions} compressions (${c.stoppedDuringSummary} turns stopped while compressing), ${c.cutOffs} turns cut off, ${c.superseded} superseded, ${c.refused} refusals, ${c.resumeNotes} resume notes, ${c.recoveryNotes} recovery notes sent, ${codex}`;
}
