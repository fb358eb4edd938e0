import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notices } from '../../apps/worker/src/turn/turn-notices.ts';
import { TestSystem } from '../support/system.ts';
import { chatPrefix, lastUserText, modelRequests, waitForIdle } from '../support/turn-helpers.ts';

/**
 * Issue 29, defect 4: an error thrown while a turn is prepared or committed
 * looped for ever, never counted: the turn stayed `running`, the next holder
 * marked it superseded, and the conversation re-ran every few seconds (with a
 * summariser call each time when compression was the cause). Now the summary
 * is cleaned like model text, any compression failure backs off, and any
 * unexpected error ends the turn failed with one notice, counted.
 */
const transcriptPrefix = 'Transcript to summarise:';
const filler = 'the quick brown fox jumps over the lazy dog '.repeat(14).trim();

describe('a turn that throws while prepared or committed', () => {
  let system: TestSystem;

  beforeAll(async () => {
    // A 1,900-token context: a few long exchanges reach the compression threshold.
    system = await TestSystem.start({ workerEnv: { MODEL_CONTEXT_TOKENS: '1900', COMPRESSION_BACKOFF_MS: '0' } });
    await system.setModelScript({
      default: { type: 'echo', prefix: 'echo: ' },
      rules: [{ match: transcriptPrefix, reply: 'SUMMARY: long pangrams\u0000, each echoed.' }],
    });
  }, 60_000);
  afterAll(async () => {
    await system?.close();
  });

  it('a summary holding U+0000 is stored without it: every message is answered, the summariser asked once per compression', async () => {
    const chat = 2901;
    const long = (n: number) => `${chatPrefix(chat)} m${n}: ${filler}`;
    for (let n = 1; n <= 8; n++) {
      await system.sendTelegram({ chatId: chat, text: long(n) });
      // Before the fix the turn that compressed never answered: its commit threw on the NUL, and it re-ran for ever.
      expect((await system.waitForTelegram(chat, n)).at(-1)?.text).toMatch(new RegExp(`echo: ${chatPrefix(chat)} m${n}:`));
    }
    await waitForIdle(system, [chat]);
    const summaries = await system.sql<{ content: string }[]>`
      select m.content from messages m join sessions s on s.id = m.session_id join conversations c on c.id = s.conversation_id
      where c.chat_id = ${String(chat)} and m.kind = 'summary'`;
    expect(summaries.length).toBeGreaterThan(0);
    for (const summary of summaries) expect(summary.content).toBe('SUMMARY: long pangrams, each echoed.');
    const asked = (await modelRequests(system)).filter((r) => lastUserText(r).startsWith(transcriptPrefix) && lastUserText(r).includes(chatPrefix(chat)));
    expect(asked).toHaveLength(summaries.length);
  });

  it('a commit Postgres refuses ends the turn failed with one notice, counted; the model is asked once and the next message answered', async () => {
    const chat = 2902;
    // A fault only this chat's text meets, raised inside the commit's own statement: the kind of error nobody planned for.
    await system.sql`
      create or replace function sb_test_poison() returns trigger language plpgsql as $$
      begin
        if new.content like '%POISON-PILL%' then raise exception 'poisoned row'; end if;
        return new;
      end $$`;
    await system.sql`create trigger sb_test_poison before insert on messages for each row execute function sb_test_poison()`;
    await system.sendTelegram({ chatId: chat, text: 'POISON-PILL please' });
    expect((await system.waitForTelegram(chat, 1)).map((m) => m.text)).toEqual([notices.failed]);
    await waitForIdle(system, [chat]);
    const streak = async () => (await system.sql<{ n: number }[]>`select runtime_crash_streak as n from conversations where chat_id = ${String(chat)}`)[0]?.n;
    // Counted like a runtime crash: RESTART_SUSPEND_THRESHOLD of them in a row suspend the conversation instead of looping.
    expect(await streak()).toBe(1);
    await system.sendTelegram({ chatId: chat, text: 'and now?' });
    expect((await system.waitForTelegram(chat, 2)).map((m) => m.text)).toEqual([notices.failed, 'echo: and now?']);
    await waitForIdle(system, [chat]);
    // Once: before the fix, the turn stayed running and was run again every few seconds.
    expect((await modelRequests(system)).filter((r) => lastUserText(r) === 'POISON-PILL please')).toHaveLength(1);
    const turns = await system.sql<{ status: string; error: string | null }[]>`
      select t.status, t.error from turns t join conversations c on c.id = t.conversation_id where c.chat_id = ${String(chat)} order by t.id`;
    expect(turns.map((t) => [t.status, t.error])).toEqual([['failed', 'UNEXPECTED'], ['completed', null]]);
    const [conversation] = await system.sql<{ restart_count: number; runtime_crash_streak: number; status: string }[]>`
      select restart_count, runtime_crash_streak, status from conversations where chat_id = ${String(chat)}`;
    // The completed turn cleared the streak again, and nothing was mistaken for a restart.
    expect(conversation).toEqual({ restart_count: 0, runtime_crash_streak: 0, status: 'active' });
  });
});
