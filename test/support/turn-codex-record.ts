import { setTimeout as sleep } from 'node:timers/promises';
import { adminRequest } from './admin-client.ts';
import { postJson, type TestSystem } from './system.ts';
import type { CodexRecord, StoredApproval, UserAnswer } from './turn-codex-invariants.ts';
import type { FaultCoverage } from './turn-faults.ts';
import { sentTo, waitForCondition, type ShownMessage } from './turn-helpers.ts';
import type { ScenarioAction } from './turn-random.ts';

/**
 * The Codex side of the randomized turn scenarios, where it touches the
 * system: switching a conversation to Codex, the user answering a question
 * as a person would (once it is shown), and what the checks of
 * turn-codex-invariants.ts read afterwards (the approvals, the fake's log).
 */

type RunAction = Extract<ScenarioAction, { kind: 'run' }>;

/** Sets the conversation's runtime to codex through the admin API (docs/admin.md); its row exists once a first command was stored. */
export async function switchToCodex(system: TestSystem, chatId: number): Promise<void> {
  const [row] = await system.sql<{ id: number }[]>`select id::int as id from conversations where chat_id = ${String(chatId)}`;
  if (!row) throw new Error(`chat ${chatId} has no conversation to switch to codex`);
  const answer = await adminRequest(system.gateway.url, 'PUT', `/admin/conversations/${row.id}/runtime`, { body: { runtime: 'codex' } });
  if (answer.status !== 200) throw new Error(`switching chat ${chatId} to codex answered ${answer.status}: ${JSON.stringify(answer.body)}`);
}

/** How long the user looks out for a question: its turn may wait behind a slow answer, another question, or a lost lease's TTL. */
const questionWaitMs = 20_000;

const textAnswers: Record<UserAnswer['choice'], string> = { approve: '/approve', 'approve-session': '/approve session', deny: '/deny' };
const buttonLabels: Record<UserAnswer['choice'], string> = { approve: 'Approve', 'approve-session': 'Approve for session', deny: 'Deny' };

/**
 * The user's answer to the question a `run` action's turn asks: once the
 * question shows with its buttons, after the action's gap, by `/approve`
 * (`/approve session`, `/deny`) or by pressing the button. Undefined when
 * the user leaves it to time out, or the question never showed (its turn
 * was stopped first) or lost its buttons before the press.
 */
export async function answerQuestion(system: TestSystem, chatId: number, action: RunAction, send: (text: string) => Promise<void>): Promise<UserAnswer | undefined> {
  if (action.answer === 'timeout') return undefined;
  const choice = action.answer;
  const question = await waitForQuestion(system, chatId, action.command);
  if (!question) return undefined;
  // The user's reading time: a gap of the interleaving under test, not a synchronisation.
  if (action.answerGapMs > 0) await sleep(action.answerGapMs);
  const at = Date.now();
  if (action.via === 'text') {
    await send(textAnswers[choice]);
    return { command: action.command, choice, at };
  }
  try {
    await postJson(`${system.simUrl}/control/telegram/press`, { chat_id: chatId, message_id: question.message_id, from: { id: chatId }, text: buttonLabels[choice] });
    return { command: action.command, choice, at };
  } catch {
    // The buttons went before the press (the question was settled or withdrawn meanwhile): the user could not press.
    return undefined;
  }
}

/**
 * The question about `command` while it still has its buttons; undefined
 * after questionWaitMs. Woken by the sim's long poll on the chat's next
 * message (a question is a message of its own), never by polling.
 */
async function waitForQuestion(system: TestSystem, chatId: number, command: string): Promise<ShownMessage | undefined> {
  const deadline = Date.now() + questionWaitMs;
  for (;;) {
    const shown = await sentTo(system, chatId);
    const open = shown.find((m) => m.reply_markup !== undefined && m.text.includes(command));
    const remaining = deadline - Date.now();
    if (open || remaining <= 0) return open;
    // Answers 408 at the deadline; either way the next round looks again.
    await fetch(`${system.simUrl}/control/telegram/wait?chat_id=${chatId}&count=${shown.length + 1}&timeout_ms=${remaining}`).then((r) => r.arrayBuffer());
  }
}

/** The conversation's questions, oldest first. */
export async function loadApprovals(system: TestSystem, chatId: number): Promise<StoredApproval[]> {
  return system.sql<StoredApproval[]>`
    select a.id::int as id, a.turn_id::int as turn_id, a.status, a.decided_via, a.summary, a.question_ref->>'platformMessageId' as question_message_id, a.decided_at,
      a.question_tidied_at is not null as tidied
    from approvals a join conversations c on c.id = a.conversation_id where c.chat_id = ${String(chatId)} order by a.id`;
}

/**
 * Waits (up to 15 s) until no settled question of these chats is still owed
 * its edit: one whose asking turn died is edited by a recovery sweep, which
 * runs every SWEEP_INTERVAL_MS. Gives up quietly: the check then says what
 * the chat still shows.
 */
export async function waitForQuestionsTidied(system: TestSystem, chatIds: number[]): Promise<void> {
  const ids = chatIds.map(String);
  await waitForCondition('settled questions to be edited', async () => {
    const [row] = await system.sql<{ owed: number }[]>`
      select count(*)::int as owed from approvals a join conversations c on c.id = a.conversation_id
      where c.chat_id in ${system.sql(ids)} and a.status <> 'pending' and a.question_ref is not null and a.question_tidied_at is null`;
    return row?.owed === 0;
  }, 15_000, 200).catch(() => undefined);
}

/** A Codex conversation's share of the batch's coverage line: that it ran, and how its questions ended. */
export function addCodexCoverage(coverage: FaultCoverage, record: CodexRecord): void {
  coverage.codexConversations += 1;
  coverage.userAnswers += record.answers.length;
  for (const row of record.approvals) {
    if (row.status === 'approved' || row.status === 'approved_for_session') coverage.approvalsApproved += 1;
    else if (row.status === 'denied') coverage.approvalsRefused += 1;
    else if (row.status === 'expired') coverage.approvalsTimedOut += 1;
    else if (row.status === 'cancelled') coverage.approvalsCancelled += 1;
    else coverage.approvalsLeftPending += 1;
  }
}
