import { adminRequest } from './admin-client.ts';
import type { TestSystem } from './system.ts';
import { waitForCondition } from './turn-helpers.ts';
import { chatPrefix } from './turn-helpers.ts';
import { Random, type ConversationScript, type ScenarioAction } from './turn-random.ts';

/**
 * Scheduled occurrences in the randomized scenario test (docs/schedules.md):
 * about one openai conversation in five gets a one-off schedule, made through
 * `POST /admin/schedules` mid-script and due 0.5–4 s later, while the
 * batch's faults (kills, stalls, lost leases) happen. Drawn from a Random of
 * their own (the seed mixed with a constant), so a seed's other actions are
 * the ones it always had; TURN_SCHEDULES=off leaves them out.
 */
export const scheduleShare = process.env.TURN_SCHEDULES === 'off' ? 0 : 0.2;

/** A constant mixed into the seed: the schedules' own random stream. */
const scheduleStream = 0x5c4ed01e;

export function addScheduleActions(seed: number, scripts: ConversationScript[]): void {
  if (scheduleShare === 0) return;
  const random = new Random((seed ^ scheduleStream) >>> 0);
  for (const script of scripts) {
    const roll = random.float();
    const delayMs = random.int(500, 4000);
    const at = random.int(1, Math.max(1, script.actions.length));
    if (script.runtime === 'codex' || roll >= scheduleShare) continue;
    // After the first message: the conversation exists by then. The prompt is plain text the model rules answer.
    const action: ScenarioAction = { kind: 'schedule', text: `${chatPrefix(script.chatId)}s1 scheduled reminder`, delayMs, gapMs: random.int(0, 300) };
    script.actions.splice(at, 0, action);
  }
}

/** Makes the action's one-off through the admin API, due `delayMs` from now. */
export async function makeScenarioSchedule(system: TestSystem, chatId: number, action: Extract<ScenarioAction, { kind: 'schedule' }>): Promise<string | undefined> {
  const [row] = await system.sql<{ id: number }[]>`select id::int as id from conversations where chat_id = ${String(chatId)}`;
  if (!row) return `chat ${chatId} has no conversation to schedule in`;
  const at = new Date(Date.now() + action.delayMs).toISOString();
  const answer = await adminRequest(system.gateway.url, 'POST', '/admin/schedules', { body: { conversationId: row.id, prompt: action.text, at } });
  return answer.status === 201 ? undefined : `POST /admin/schedules answered ${answer.status}: ${JSON.stringify(answer.body)}`;
}

/** Waits until no schedule of the chats is still active: each has had its occurrence (or the wait names the ones left). */
export async function waitForSchedules(system: TestSystem, chatIds: number[], timeoutMs = 60_000): Promise<void> {
  const ids = chatIds.map(String);
  await waitForCondition(
    `the schedules of chats ${chatIds.join(', ')} to have run`,
    async () => {
      const [row] = await system.sql<{ active: number }[]>`
        select count(*)::int as active from schedules s join conversations c on c.id = s.conversation_id
        where c.chat_id in ${system.sql(ids)} and s.status = 'active'`;
      return row?.active === 0;
    },
    timeoutMs,
  );
}

/**
 * Check (s): every schedule the script made ran exactly once: ended, one run,
 * none missed, and one stored input for its occurrence (the other checks hold
 * that input to be answered once, like any message).
 */
export async function checkSchedules(system: TestSystem, script: ConversationScript): Promise<string[]> {
  const expected = script.actions.filter((a) => a.kind === 'schedule').length;
  const rows = await system.sql<{ id: number; status: string; runs: number; missed: number; inputs: number }[]>`
    select s.id::int as id, s.status, s.runs, s.missed,
      (select count(*)::int from inbound_events e where e.conversation_id = s.conversation_id and e.event_id like 'schedule:' || s.id || ':%') as inputs
    from schedules s join conversations c on c.id = s.conversation_id where c.chat_id = ${String(script.chatId)} order by s.id`;
  const problems: string[] = [];
  if (rows.length !== expected) problems.push(`(s) ${expected} schedules made, ${rows.length} stored`);
  for (const row of rows) {
    if (row.status !== 'ended' || row.runs !== 1 || row.missed !== 0 || row.inputs !== 1) {
      problems.push(`(s) schedule #${row.id}: status ${row.status}, ${row.runs} runs, ${row.missed} missed, ${row.inputs} stored inputs (want ended, 1, 0, 1)`);
    }
  }
  return problems;
}
