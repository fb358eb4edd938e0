import { apiOnlyNotes } from '@switchboard/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFakeCodexSetup, requestsNamed, turnRequest, type FakeCodexSetup } from './fake-codex-fixture.ts';

// Issue 29, defect 7: the API-only notes reach Codex as developer
// instructions, never in the user's turn text, which Codex stores in its
// thread as the user's words (and its compaction keeps or summarises).

let setup: FakeCodexSetup;
beforeEach(() => {
  setup = createFakeCodexSetup();
});
afterEach(async () => {
  await setup.cleanup();
});

const instructions = 'You are a helpful assistant.';

/** The text of every `turn/start` input the fake received, in order. */
const turnTexts = (setup: FakeCodexSetup) =>
  requestsNamed(setup.readLog(), 'turn/start').map((line) => JSON.stringify(line.received.params?.input ?? null));

const developerInstructionsSent = (setup: FakeCodexSetup, method: string) =>
  requestsNamed(setup.readLog(), method).map((line) => line.received.params?.developerInstructions);

describe('API-only notes on the Codex runtime', () => {
  it('a resumed turn after a restart gets the resume note as developer instructions, not in its input', async () => {
    const first = await setup.createPool().runtimeFor(1, setup.conversation()).runTurn(turnRequest('hi', { instructions }));
    expect(first.outcome).toBe('completed');

    // The worker restarted: a new pool, a new child, the note owed.
    const runtime = setup.createPool().runtimeFor(1, setup.conversation());
    const resumed = await runtime.runTurn(turnRequest('show-instructions', { instructions, notes: [apiOnlyNotes.resume], runtimeIds: first.runtimeIds }));

    expect(turnTexts(setup).some((text) => text.includes('cut off by a restart'))).toBe(false);
    expect(developerInstructionsSent(setup, 'thread/resume')).toEqual([`${instructions}\n\n${apiOnlyNotes.resume}`]);
    // The fake's model read them as the thread's instructions.
    expect(resumed).toMatchObject({ outcome: 'completed', text: `codex: instructions: ${instructions}\n\n${apiOnlyNotes.resume}` });
  });

  it('a recovered turn on the same child: a fresh child loads the thread with the note, and the turn after it no longer has it', async () => {
    const runtime = setup.createPool().runtimeFor(1, setup.conversation());
    const first = await runtime.runTurn(turnRequest('hi', { instructions }));
    const recovered = await runtime.runTurn(turnRequest('show-instructions', { instructions, notes: [apiOnlyNotes.recovery], runtimeIds: first.runtimeIds }));
    const after = await runtime.runTurn(turnRequest('show-instructions', { instructions, runtimeIds: recovered.runtimeIds }));

    expect(recovered).toMatchObject({ outcome: 'completed', text: `codex: instructions: ${instructions}\n\n${apiOnlyNotes.recovery}` });
    expect(after).toMatchObject({ outcome: 'completed', text: `codex: instructions: ${instructions}` });
    expect(turnTexts(setup).some((text) => text.includes('Note from the chat gateway'))).toBe(false);
    // One thread throughout: the note changed how it was loaded, not which thread it is.
    expect(new Set([first, recovered, after].map((result) => result.runtimeIds?.threadId)).size).toBe(1);
    const pids = requestsNamed(setup.readLog(), 'turn/start').map((line) => line.pid);
    expect(new Set(pids).size).toBe(3);
  });

  it('a new thread gets the notes in thread/start, and the input is the user words alone', async () => {
    const result = await setup
      .createPool()
      .runtimeFor(1, setup.conversation())
      .runTurn(turnRequest('show-instructions', { instructions: '', notes: [apiOnlyNotes.resume] }));

    expect(result).toMatchObject({ outcome: 'completed', text: `codex: instructions: ${apiOnlyNotes.resume}` });
    expect(developerInstructionsSent(setup, 'thread/start')).toEqual([apiOnlyNotes.resume]);
    expect(requestsNamed(setup.readLog(), 'turn/start')[0]?.received.params?.input).toEqual([{ type: 'text', text: 'show-instructions' }]);
  });
});
