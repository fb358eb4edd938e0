import { describe, expect, it } from 'vitest';
import { isFakeRunning, turnStartsFor, useCodexSystem, waitForTurnStart, type Logged } from '../support/codex-system.ts';
import { waitForCondition } from '../support/turn-helpers.ts';

// Issue 29, defect 6: a /stop, or a new message in interrupt mode, that lands
// while Codex has not yet answered thread/resume or turn/start ends the turn as
// stopped, never as a crash: the user never reads the crash notice, the
// conversation's runtime crash streak does not grow, and no turn/start reaches
// the app-server after the stop. A real worker process and the fake app-server
// (apps/sim) as its child; CODEX_IDLE_MS=1000 closes the child between turns,
// so the next turn's child must resume the thread.

/** The text input of a logged turn/start. */
const textOf = (logged: Logged) => (logged.received.params?.input as { text: string }[] | undefined)?.[0]?.text;

const crashedNotice = 'The agent process stopped unexpectedly. Please send your message again.';

describe('a stop while Codex has not answered yet, through a worker process', () => {
  const codex = useCodexSystem({ CODEX_IDLE_MS: '1000' });

  const crashStreakOf = async (chatId: number) =>
    (await codex.system.sql<{ runtime_crash_streak: number }[]>`select runtime_crash_streak from conversations where chat_id = ${String(chatId)}`)[0]?.runtime_crash_streak;
  const turnStatusesOf = async (chatId: number) =>
    (await codex.system.sql<{ status: string }[]>`
      select t.status from turns t join conversations c on c.id = t.conversation_id where c.chat_id = ${String(chatId)} order by t.id`).map((t) => t.status);
  const resumesSoFar = () => codex.setup.readLog().filter((m) => m.received.method === 'thread/resume').length;

  /** A first turn that makes the thread's next thread/resume wait `delayMs`, then the idle close of its child. */
  async function threadWithSlowResume(chatId: number, delayMs: number): Promise<void> {
    await codex.system.sendTelegram({ chatId, text: `delay-resume: ${delayMs}` });
    await codex.system.waitForTelegram(chatId, 1);
    const { instance } = await waitForTurnStart(codex.setup, `delay-resume: ${delayMs}`);
    await waitForCondition('the idle child to be closed', async () => !isFakeRunning(instance), 20_000);
  }

  it('/stop while thread/resume is never answered: "Stopped.", no crash counted, no turn/start', async () => {
    const chatId = 4301;
    await threadWithSlowResume(chatId, 600_000);
    const resumesBefore = resumesSoFar();
    await codex.system.sendTelegram({ chatId, text: 'hang' });
    await waitForCondition('the new child to send thread/resume', async () => resumesSoFar() > resumesBefore, 20_000);
    await codex.system.sendTelegram({ chatId, text: '/stop' });

    const replies = (await codex.system.waitForTelegram(chatId, 2)).map((m) => m.text);
    expect(replies[1]).toBe('Stopped.');
    expect(replies).not.toContain(crashedNotice);
    expect(await crashStreakOf(chatId)).toBe(0);
    expect(await turnStatusesOf(chatId)).toEqual(['completed', 'cancelled']);
    expect(turnStartsFor(codex.setup, 'hang')).toEqual([]);
  });

  it('/stop while thread/resume is answered late: the stopped turn sends no turn/start, and the next message is answered', async () => {
    const chatId = 4302;
    await threadWithSlowResume(chatId, 2000);
    const resumesBefore = resumesSoFar();
    await codex.system.sendTelegram({ chatId, text: 'hang' });
    await waitForCondition('the new child to send thread/resume', async () => resumesSoFar() > resumesBefore, 20_000);
    await codex.system.sendTelegram({ chatId, text: '/stop' });

    expect((await codex.system.waitForTelegram(chatId, 2)).at(-1)?.text).toBe('Stopped.');
    // Before the fix the late answer was followed by turn/start, then turn/interrupt, and only then "Stopped.".
    expect(turnStartsFor(codex.setup, 'hang')).toEqual([]);
    await codex.system.sendTelegram({ chatId, text: 'after the stop' });
    expect((await codex.system.waitForTelegram(chatId, 3)).at(-1)?.text).toBe('codex: after the stop');
    // The stopped message reaches Codex only as carried context of the next turn (the describe below).
    expect(turnStartsFor(codex.setup, 'hang').map(textOf)).toEqual([expect.stringMatching(/User: hang[\s\S]*after the stop$/)]);
    expect(await crashStreakOf(chatId)).toBe(0);
  });

  it('a new message while turn/start is never answered interrupts the turn, not as a crash, and is answered', async () => {
    const chatId = 4303;
    await codex.system.sendTelegram({ chatId, text: 'warm up' });
    await codex.system.waitForTelegram(chatId, 1);
    await codex.system.sendTelegram({ chatId, text: 'delay-start: 600000' });
    await waitForTurnStart(codex.setup, 'delay-start: 600000');
    await codex.system.sendTelegram({ chatId, text: 'never mind' });

    // The child that never answered is closed after the interrupt timeout (5 s); a fresh one answers.
    const replies = (await codex.system.waitForTelegram(chatId, 2, 30_000)).map((m) => m.text);
    expect(replies).toEqual(['codex: warm up', 'codex: never mind']);
    expect(await crashStreakOf(chatId)).toBe(0);
    expect(await turnStatusesOf(chatId)).toEqual(['completed', 'interrupted', 'completed']);
  });
});

// A message whose turn was stopped before its turn/start reached Codex is in
// the transcript, but the next turn continues the same thread: before the fix
// it sent only its own input, so Codex never saw that message (found by the
// scenario test, SEED=101, chat 30130). Its own system: the never-answered
// resume above keeps a child busy for the rest of that file's system.
describe('a message Codex never received, through a worker process', () => {
  const codex = useCodexSystem({ CODEX_IDLE_MS: '1000' });

  it('is carried with the next turn on the thread, before its input, and only once', async () => {
    const chatId = 4311;
    await codex.system.sendTelegram({ chatId, text: 'delay-resume: 2000' });
    await codex.system.waitForTelegram(chatId, 1);
    const { instance } = await waitForTurnStart(codex.setup, 'delay-resume: 2000');
    await waitForCondition('the idle child to be closed', async () => !isFakeRunning(instance), 20_000);
    const resumes = () => codex.setup.readLog().filter((m) => m.received.method === 'thread/resume').length;
    const resumesBefore = resumes();
    await codex.system.sendTelegram({ chatId, text: 'the words codex missed' });
    await waitForCondition('the new child to send thread/resume', async () => resumes() > resumesBefore, 20_000);
    await codex.system.sendTelegram({ chatId, text: '/stop' });
    expect((await codex.system.waitForTelegram(chatId, 2)).at(-1)?.text).toBe('Stopped.');
    expect(turnStartsFor(codex.setup, 'the words codex missed')).toEqual([]);

    // The same thread goes on (resumed, not new), so only carried context can tell Codex of the stopped message.
    await codex.system.sendTelegram({ chatId, text: 'i meant these words' });
    expect((await codex.system.waitForTelegram(chatId, 3)).at(-1)?.text).toBe('codex: i meant these words');
    expect(codex.setup.readLog().filter((m) => m.received.method === 'thread/start')).toHaveLength(1);
    expect(turnStartsFor(codex.setup, 'i meant these words').map(textOf)).toEqual([
      expect.stringMatching(/^\[Earlier conversation[^\n]*\nUser: the words codex missed\n\[End of earlier conversation\.\]\n\ni meant these words$/),
    ]);

    // Codex has both now: a follow-up carries nothing again.
    await codex.system.sendTelegram({ chatId, text: 'a plain follow-up' });
    expect((await codex.system.waitForTelegram(chatId, 4)).at(-1)?.text).toBe('codex: a plain follow-up');
    expect(turnStartsFor(codex.setup, 'a plain follow-up').map(textOf)).toEqual(['a plain follow-up']);
    expect(turnStartsFor(codex.setup, 'the words codex missed')).toHaveLength(1);
  });
});
