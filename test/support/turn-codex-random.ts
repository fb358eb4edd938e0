import { busyInputModes } from '@switchboard/core';
import { chatPrefix } from './turn-helpers.ts';
import type { ConversationScript, Random, ScenarioAction } from './turn-random.ts';

/**
 * The Codex conversations of the randomized turn scenarios (issue 29, "The
 * randomized scenario test, with everything on"): about one conversation in
 * five is switched to the Codex runtime (the fake app-server of apps/sim)
 * before its first message, and its script speaks the fake's language
 * (docs/codex.md, "The fake app-server": the last line of a turn's text picks
 * what it does). TURN_CODEX=off leaves them out and replays the seeds of
 * before.
 */

/** How the user meets a question: answers it (a text command or a button), or leaves it to time out. */
export type ApprovalIntent = 'approve' | 'approve-session' | 'deny' | 'timeout';

/**
 * The workers' APPROVAL_TIMEOUT_SECONDS in the scenarios: short, so a question
 * left alone times out within the batch, yet long enough for the player to
 * see the question and answer it (after at most 800 ms) under load.
 */
export const scenarioApprovalTimeoutSeconds = 3;

/** The share of conversations on the Codex runtime; 0 with TURN_CODEX=off. */
export function codexShare(env: NodeJS.ProcessEnv = process.env): number {
  return env.TURN_CODEX === 'off' ? 0 : 0.2;
}

/**
 * A Codex conversation's script: a busy mode, then 2–6 actions, each after a
 * 0–300 ms gap: a plain message (the fake echoes it), a `run:` command whose
 * question the user approves (once in five "for session"), denies or leaves
 * to time out, by text command or button, a slow streamed answer (about 3 s),
 * /stop. About one in seven also loses its lease while a slow answer streams
 * or while a question waits, then sends more input. Every message's first
 * line starts with the chat's `c<N>:` prefix; a command names the chat and
 * the action, so each is unique in the fake's log and the approvals table.
 */
export function generateCodexScript(random: Random, index: number, chatId: number): ConversationScript {
  const mode = random.pick(['default', ...busyInputModes] as const);
  const count = random.int(2, 6);
  const prefix = chatPrefix(chatId);
  const actions: ScenarioAction[] = [];
  for (let i = 0; i < count; i++) actions.push(randomCodexAction(random, { chatId, i, gapMs: random.int(0, 300) }));
  if (random.float() < 0.15) {
    const n = count + 2;
    // A ~3 s streamed answer, or a question nobody answers (it waits APPROVAL_TIMEOUT_SECONDS): either outlasts a lease renewal.
    const running: ScenarioAction =
      random.float() < 0.5
        ? { kind: 'slow', text: slowText(prefix, n), gapMs: random.int(0, 300) }
        : runAction({ chatId, i: n, gapMs: random.int(0, 300) }, { answer: 'timeout', via: 'text', answerGapMs: 0 });
    const lease: ScenarioAction = { kind: 'lease', text: '', gapMs: random.int(300, 1500) };
    const after: ScenarioAction = { kind: 'plain', text: `${prefix}a${n + 1} are you there`, gapMs: random.int(0, 1500) };
    actions.splice(random.int(0, actions.length), 0, running, lease, after);
  }
  return { index, chatId, mode, actions, summaryDelayMs: 0, runtime: 'codex' };
}

interface ActionPlace {
  chatId: number;
  i: number;
  gapMs: number;
}

function randomCodexAction(random: Random, place: ActionPlace): ScenarioAction {
  const prefix = chatPrefix(place.chatId);
  const kind = random.weighted([
    ['plain', 30],
    ['run', 35],
    ['slow', 20],
    ['stop', 15],
  ] as const);
  if (kind === 'plain') return { kind, text: `${prefix}a${place.i} hello codex`, gapMs: place.gapMs };
  if (kind === 'slow') return { kind, text: slowText(prefix, place.i), gapMs: place.gapMs };
  if (kind === 'stop') return { kind, text: '/stop', gapMs: place.gapMs };
  const intent = random.weighted([
    ['approve', 35],
    ['deny', 30],
    ['timeout', 25],
    ['approve-session', 10],
  ] as const);
  return runAction(place, { answer: intent, via: random.pick(['text', 'button'] as const), answerGapMs: random.int(0, 800) });
}

/** `slow: <word>`: the fake streams `codex: <word> ` forty times, 20 deltas 150 ms apart. */
function slowText(prefix: string, i: number): string {
  return `${prefix}a${i} tell a story\nslow: a${i}`;
}

function runAction(place: ActionPlace, how: { answer: ApprovalIntent; via: 'text' | 'button'; answerGapMs: number }): ScenarioAction {
  const command = codexCommandOf(place.chatId, place.i);
  return { kind: 'run', text: `${chatPrefix(place.chatId)}a${place.i} please run it\nrun: ${command}`, command, ...how, gapMs: place.gapMs };
}

/** The command of action `i` of chat `chatId`: unique in the batch, so a question and a decision name their action. */
export function codexCommandOf(chatId: number, i: number): string {
  return `make c${chatId}-a${i}`;
}

/** How a `run` action shows in a script's one-line description. */
export function describeRunAction(action: Extract<ScenarioAction, { kind: 'run' }>): string {
  return action.answer === 'timeout' ? 'run(no answer)' : `run(${action.answer} by ${action.via} +${action.answerGapMs}ms)`;
}
