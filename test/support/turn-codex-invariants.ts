import { basename } from 'node:path';
import { approvalReplies } from '@switchboard/core';
import type { Logged } from './codex-system.ts';
import { acceptedInput } from './turn-invariants.ts';
import type { ChatSnapshot, ShownMessage, StoredTurn } from './turn-helpers.ts';

/**
 * The invariants of a Codex conversation in the randomized turn scenarios
 * (docs/turns.md, "The randomized scenario test"), over what the fake
 * app-server received (its log), the approvals table and what the chat
 * showed. The checks every conversation gets (turn-invariants.ts) apply too,
 * but for the three about OpenAI model requests; these are the ones only a
 * Codex conversation has. Each returns human-readable violations, empty when
 * it holds.
 */

/** One approvals row (docs/codex.md, "Approvals in chat"). */
export interface StoredApproval {
  id: number;
  turn_id: number;
  status: 'pending' | 'approved' | 'approved_for_session' | 'denied' | 'cancelled' | 'expired';
  decided_via: string | null;
  /** `run \`<command>\`` for a command. */
  summary: string;
  /** The platform message the question was posted as (null: never posted, or the worker died before it recorded it). */
  question_message_id: string | null;
  decided_at: Date | null;
  /** Its edit (buttons gone) was done, or claimed by a sweeping worker (approvals.question_tidied_at). */
  tidied: boolean;
}

/** A `turn/start` the fake received for this conversation: when (the host's clock), from which fake process, its text. */
export interface FakeTurnStart {
  at: number;
  proc: string;
  text: string;
}

/** An answer the fake received to one of its approval requests. */
export interface FakeDecision {
  at: number;
  proc: string;
  command: string;
  /** As sent: accept, acceptForSession, decline, cancel (or the older vocabulary). */
  decision: string;
}

/** What the user did with a question: only answers the player really sent (a text command, or a press the sim took). */
export interface UserAnswer {
  command: string;
  choice: 'approve' | 'approve-session' | 'deny';
  at: number;
}

export interface CodexRecord {
  approvals: StoredApproval[];
  turnStarts: FakeTurnStart[];
  decisions: FakeDecision[];
  answers: UserAnswer[];
}

/**
 * What the fake received for one conversation: its `turn/start`s and the
 * decisions answering its approval requests. A fake process serves one
 * conversation (docs/codex.md, "The pool"), which its `cwd`
 * (`<CODEX_WORKSPACES>/<conversation id>`) names.
 */
export function codexLogOf(log: Logged[], conversationId: number): Pick<CodexRecord, 'turnStarts' | 'decisions'> {
  const procOf = (entry: Logged) => entry.instance;
  const procs = new Set(log.filter((e) => typeof e.received.params?.cwd === 'string' && basename(e.received.params.cwd) === String(conversationId)).map(procOf));
  const mine = log.filter((e) => procs.has(procOf(e)));
  return {
    turnStarts: mine.filter((e) => e.received.method === 'turn/start').map((e) => ({ at: e.at ?? 0, proc: procOf(e), text: inputTextOf(e.received.params?.input) })),
    decisions: mine.flatMap((e) => {
      const decision = e.received.result?.decision;
      const command = e.answering?.command;
      return typeof decision === 'string' && typeof command === 'string' ? [{ at: e.at ?? 0, proc: procOf(e), command, decision }] : [];
    }),
  };
}

/** The text items of a turn/start's input, joined as the fake reads them. */
function inputTextOf(input: unknown): string {
  if (!Array.isArray(input)) return '';
  return input.flatMap((item: { type?: unknown; text?: unknown }) => (item?.type === 'text' && typeof item.text === 'string' ? [item.text] : [])).join('\n');
}

/** Slack between the fake's clock (Date.now()) and Postgres's now(): one host, but now() is its transaction's start. */
const clockSlackMs = 250;
/** The end of the history a new thread carries before the user's words (packages/agent codex-input.ts). */
const historyEnd = '[End of earlier conversation.]';
const questionHeading = 'Approval needed:';

type Outcome = 'approved' | 'approved_for_session' | 'refused' | 'cancelled';

/** What the fake was told, in one vocabulary. */
function outcomeOfDecision(decision: string): Outcome {
  if (decision === 'accept' || decision === 'approved') return 'approved';
  if (decision === 'acceptForSession' || decision === 'approved_for_session') return 'approved_for_session';
  if (decision === 'cancel' || decision === 'abort') return 'cancelled';
  return 'refused';
}

/** What the runtime must tell Codex for a settled row: a timed-out question is a refusal (fail closed). */
function outcomeOfRow(status: StoredApproval['status']): Outcome | undefined {
  if (status === 'approved' || status === 'approved_for_session') return status;
  if (status === 'denied' || status === 'expired') return 'refused';
  return status === 'cancelled' ? 'cancelled' : undefined;
}

const choiceOfStatus: Partial<Record<StoredApproval['status'], UserAnswer['choice']>> = { approved: 'approve', approved_for_session: 'approve-session', denied: 'deny' };

export function commandOfApproval(approval: StoredApproval): string | undefined {
  return /`([^`]*)`/.exec(approval.summary)?.[1];
}

/** The user's words of a turn/start: after the history a new thread carries, if any. */
function newInputOf(text: string): string {
  const end = text.lastIndexOf(historyEnd);
  return end === -1 ? text : text.slice(end + historyEnd.length);
}

const isCutOff = (t: StoredTurn | undefined) => t?.error === 'cut_off_by_restart' || (t?.cut_off_at ?? null) !== null;

/**
 * Codex got every message: each accepted user message reached the fake in a
 * `turn/start` at least once (as the user's words, or in the history a new
 * thread carries), and never as new words after the turn that took it had
 * committed (a stale holder starting Codex on input another turn answered).
 * A message whose turn was interrupted or stopped before its `turn/start`
 * went out counts only once the next turn carried it (docs/codex.md,
 * "Threads"; tolerated as a known problem until SEED=101's fix).
 */
export function checkCodexInput(snapshot: ChatSnapshot, record: CodexRecord): string[] {
  const problems: string[] = [];
  const turns = new Map(snapshot.turns.map((t) => [t.id, t]));
  for (const event of acceptedInput(snapshot)) {
    const clip = JSON.stringify(event.text.slice(0, 60));
    if (!record.turnStarts.some((start) => start.text.includes(event.text))) problems.push(`event ${event.id} ${clip} never reached Codex in a turn/start`);
    const committed = event.turn_id === null ? undefined : turns.get(event.turn_id)?.ended_at?.getTime();
    if (committed === undefined) continue;
    for (const late of record.turnStarts.filter((start) => start.at > committed + clockSlackMs && newInputOf(start.text).includes(event.text))) {
      problems.push(`event ${event.id} ${clip} reached Codex again (process ${late.proc.slice(0, 8)}) ${late.at - committed} ms after turn ${event.turn_id} that took it committed`);
    }
  }
  return problems;
}

/**
 * The user's answers are what Codex is told, and nothing runs unapproved:
 * - every row the user decided (approved, approved for session, denied) was
 *   decided by the user's own answer, the one the user gave (text or button,
 *   never anything else);
 * - every approval the fake received (accept, acceptForSession) follows a row
 *   of that command decided so, one row per approval: nothing was approved
 *   that the user did not approve;
 * - in a turn that completed, each question reached the fake as its outcome:
 *   approved as accept, for session as acceptForSession, denied or timed out
 *   as a refusal (a completed turn had no question withdrawn);
 * - no question is left pending, except one whose turn was cut off (its
 *   worker died while it waited; the next question in the conversation closes it).
 */
export function checkCodexDecisions(snapshot: ChatSnapshot, record: CodexRecord): string[] {
  const problems: string[] = [];
  const turns = new Map(snapshot.turns.map((t) => [t.id, t]));
  for (const row of record.approvals) {
    const command = commandOfApproval(row) ?? '?';
    const wanted = choiceOfStatus[row.status];
    const answered = record.answers.filter((a) => a.command === command).map((a) => a.choice);
    if (wanted && (!['text', 'button'].includes(row.decided_via ?? '') || !answered.includes(wanted))) {
      problems.push(`approval ${row.id} of ${command} is ${row.status} (via ${row.decided_via ?? '-'}), but the user answered ${answered.join(', ') || 'nothing'}`);
    }
    if (row.status === 'pending' && !isCutOff(turns.get(row.turn_id))) problems.push(`approval ${row.id} of ${command} was left pending by turn ${row.turn_id} (${turns.get(row.turn_id)?.status ?? 'missing'})`);
  }
  problems.push(...checkNothingUnapproved(record), ...checkCompletedTurnsTold(snapshot, record));
  return problems;
}

/** Each accept the fake got is matched by its own row of that command, decided so before it. */
function checkNothingUnapproved(record: CodexRecord): string[] {
  const unused = [...record.approvals];
  return record.decisions.flatMap((decision) => {
    const outcome = outcomeOfDecision(decision.decision);
    if (outcome !== 'approved' && outcome !== 'approved_for_session') return [];
    const i = unused.findIndex((row) => commandOfApproval(row) === decision.command && row.status === outcome && (row.decided_at?.getTime() ?? Infinity) <= decision.at + clockSlackMs);
    if (i === -1) return [`Codex was told ${decision.decision} for ${decision.command} (process ${decision.proc.slice(0, 8)}), but no question of it was ${outcome} before`];
    unused.splice(i, 1);
    return [];
  });
}

/** In a completed turn, each question's outcome reached the fake, after the question was settled. */
function checkCompletedTurnsTold(snapshot: ChatSnapshot, record: CodexRecord): string[] {
  const completed = new Set(snapshot.turns.filter((t) => t.status === 'completed').map((t) => t.id));
  const unused = [...record.decisions];
  return record.approvals
    .filter((row) => completed.has(row.turn_id))
    .flatMap((row) => {
      const command = commandOfApproval(row);
      const outcome = outcomeOfRow(row.status);
      if (outcome === undefined || outcome === 'cancelled') return [`approval ${row.id} of ${command ?? '?'} is ${row.status}, yet its turn ${row.turn_id} completed`];
      const decided = row.decided_at?.getTime() ?? 0;
      const i = unused.findIndex((d) => d.command === command && outcomeOfDecision(d.decision) === outcome && d.at >= decided - clockSlackMs);
      if (i === -1) return [`approval ${row.id} of ${command ?? '?'} is ${row.status} and its turn ${row.turn_id} completed, but Codex was never told ${outcome}`];
      unused.splice(i, 1);
      return [];
    });
}

/**
 * The committed reply of a completed turn whose last message asked to run a
 * command says what became of the command: `codex: ran <command>` when its
 * question was approved, `codex: <command> was declined` when it was refused
 * or timed out. A completed `run:` turn with no question at all is one too.
 */
export function checkCodexReplies(snapshot: ChatSnapshot, record: CodexRecord): string[] {
  return snapshot.turns
    .filter((t) => t.status === 'completed')
    .flatMap((turn) => {
      const mine = snapshot.messages.filter((m) => m.turn_id === turn.id);
      const lastLine = (mine.filter((m) => m.role === 'user').at(-1)?.content ?? '').trim().split('\n').at(-1) ?? '';
      const command = /^run: (.+)$/.exec(lastLine.trim())?.[1];
      if (command === undefined) return [];
      const question = record.approvals.filter((a) => a.turn_id === turn.id && commandOfApproval(a) === command).at(-1);
      if (!question) return [`turn ${turn.id} completed "run: ${command}" without asking`];
      const reply = mine.filter((m) => m.role === 'assistant' && m.content !== '').at(-1)?.content;
      const ran = question.status === 'approved' || question.status === 'approved_for_session';
      const expected = ran ? `codex: ran ${command}` : `codex: ${command} was declined`;
      return reply === expected ? [] : [`turn ${turn.id}'s question about ${command} is ${question.status}, but its reply is ${JSON.stringify(reply ?? null)}, not ${JSON.stringify(expected)}`];
    });
}

/**
 * What the chat showed of the questions: each posted question is a message
 * the user saw, and once settled it has no buttons left; every question shown
 * is one the approvals table knows; one "No answer in time: declined." per
 * question that timed out. With a SIGKILL or a stall in the batch, a worker
 * can die between posting a question and recording it, or between closing it
 * and saying so: then a stray question, or fewer lines, pass. A question whose
 * asking turn was cut off (its worker died) is edited by the recovery sweep
 * (SEED=505, SEED=606 before that); it may keep its buttons only when a
 * sweeping worker claimed it and was killed before its edit (the one window
 * left, docs/codex.md "Approvals in chat").
 */
export function checkApprovalPosts(record: CodexRecord, shown: ShownMessage[], faults: { kills: boolean; cutOffTurns?: ReadonlySet<number> }): string[] {
  const problems: string[] = [];
  const posted = new Set(record.approvals.flatMap((a) => (a.question_message_id ? [a.question_message_id] : [])));
  for (const row of record.approvals.filter((a) => a.question_message_id !== null)) {
    const message = shown.find((m) => String(m.message_id) === row.question_message_id);
    if (!message) problems.push(`approval ${row.id}'s question (message ${row.question_message_id}) was never shown`);
    else if (row.status !== 'pending' && message.reply_markup !== undefined && !(faults.kills && row.tidied && faults.cutOffTurns?.has(Number(row.turn_id)))) {
      problems.push(`approval ${row.id} is ${row.status}, but its question still shows its buttons`);
    }
  }
  const strays = shown.filter((m) => m.text.startsWith(questionHeading) && !posted.has(String(m.message_id)));
  if (strays.length > 0 && !faults.kills) problems.push(`${strays.length} question(s) shown that no approval recorded: ${strays.map((m) => m.message_id).join(', ')}`);
  const timedOut = record.approvals.filter((a) => a.status === 'expired' && a.question_message_id !== null).length;
  const lines = shown.filter((m) => m.text === approvalReplies.timedOut).length;
  if (lines > timedOut || (lines < timedOut && !faults.kills)) problems.push(`${timedOut} question(s) timed out, but the chat said "${approvalReplies.timedOut}" ${lines} time(s)`);
  return problems;
}

/**
 * What the chat showed without the questions and the "No answer in time"
 * lines: those are posted by the waiting turn itself, not through the outbox
 * (docs/codex.md, "Approvals in chat"), so check (f) compares the rest with
 * the outbox, and checkApprovalPosts these.
 */
export function withoutApprovalPosts(shown: ShownMessage[], record: CodexRecord): ShownMessage[] {
  const posted = new Set(record.approvals.flatMap((a) => (a.question_message_id ? [a.question_message_id] : [])));
  return shown.filter((m) => !posted.has(String(m.message_id)) && !m.text.startsWith(questionHeading) && m.text !== approvalReplies.timedOut);
}

/** Every Codex check; `options.kills`: a worker was killed (SIGKILL) or stalled in the batch. */
export function checkCodex(snapshot: ChatSnapshot, record: CodexRecord, shown: ShownMessage[], options: { kills: boolean }): string[] {
  const faults = { kills: options.kills, cutOffTurns: new Set(snapshot.turns.filter((t) => t.cut_off_at).map((t) => t.id)) };
  return [
    ...checkCodexInput(snapshot, record).map((p) => `(codex input) ${p}`),
    ...checkCodexDecisions(snapshot, record).map((p) => `(codex approvals) ${p}`),
    ...checkCodexReplies(snapshot, record).map((p) => `(codex replies) ${p}`),
    ...checkApprovalPosts(record, shown, faults).map((p) => `(codex questions) ${p}`),
  ];
}

/** The approvals and what the fake received, appended to a Codex conversation's failure so it can be diagnosed from the log alone. */
export function describeCodex(record: CodexRecord): string {
  const clip = (text: string) => JSON.stringify(text.length > 70 ? `…${text.slice(-70)}` : text);
  return [
    `  approvals: ${record.approvals.map((a) => `#${a.id} t${a.turn_id} ${commandOfApproval(a) ?? a.summary} ${a.status}/${a.decided_via ?? '-'}${a.question_message_id ? ` m${a.question_message_id}` : ''}`).join(' | ') || 'none'}`,
    `  user answered: ${record.answers.map((a) => `${a.command} ${a.choice} at ${a.at % 100_000}`).join(' | ') || 'nothing'}`,
    '  fake received:',
    ...record.turnStarts.map((s) => `    turn/start at ${s.at % 100_000} p${s.proc.slice(0, 8)}: ${clip(newInputOf(s.text).trim())}${s.text.includes(historyEnd) ? ' (after carried history)' : ''}`),
    ...record.decisions.map((d) => `    decision at ${d.at % 100_000} p${d.proc.slice(0, 8)}: ${d.command} ${d.decision}`),
  ].join('\n');
}
