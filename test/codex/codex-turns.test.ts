import type { ApprovalAnswer, ApprovalQuestion, AskUser } from '@switchboard/agent';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clientAnswers, createFakeCodexSetup, waitLimit, requestsNamed, turnRequest, type FakeCodexSetup } from './fake-codex-fixture.ts';

// The Codex runtime against the fake app-server as a real child on real stdio
// (apps/sim/src/codex): turns, items, approvals and server requests.

let setup: FakeCodexSetup;
beforeEach(() => {
  setup = createFakeCodexSetup();
});
afterEach(async () => {
  await setup.cleanup();
});

/** askUser that answers every question the same way and remembers the questions. */
function answering(decision: ApprovalAnswer['decision']): { askUser: AskUser; questions: ApprovalQuestion[] } {
  const questions: ApprovalQuestion[] = [];
  return {
    questions,
    askUser: async (question) => {
      questions.push(question);
      return { decision } as ApprovalAnswer;
    },
  };
}

function decisionsSent(setup: FakeCodexSetup): unknown[] {
  return clientAnswers(setup.readLog()).flatMap((answer) => (answer.result && 'decision' in answer.result ? [answer.result.decision] : []));
}

describe('a plain turn', () => {
  it('answers with the agent message, on a new thread started with the profile, and returns the thread id', async () => {
    const runtime = setup.createPool().runtimeFor(1, setup.conversation({ profile: 'workspace-write' }));
    const result = await runtime.runTurn(turnRequest('hello there', { instructions: 'Be brief.', notes: ['the last tool call was cut off'] }));

    expect(result).toMatchObject({ outcome: 'completed', text: 'codex: hello there', toolIterations: 0 });
    expect(result.entries).toEqual([{ role: 'assistant', content: 'codex: hello there' }]);
    expect(result.runtimeIds?.threadId).toMatch(/^thr_/);

    const log = setup.readLog();
    expect(log.map((line) => line.received.method).slice(0, 4)).toEqual(['initialize', 'initialized', 'thread/start', 'turn/start']);
    expect(log[0]?.received.params).toMatchObject({ clientInfo: { name: 'switchboard' } });
    expect(requestsNamed(log, 'thread/start')[0]?.received.params).toMatchObject({
      cwd: setup.workspace,
      approvalPolicy: 'on-request',
      sandbox: 'workspace-write',
      // The note goes with the instructions, never into the user's words (issue 29, defect 7).
      developerInstructions: 'Be brief.\n\nthe last tool call was cut off',
    });
    const turnStart = requestsNamed(log, 'turn/start')[0]?.received.params;
    expect(turnStart).toMatchObject({ threadId: result.runtimeIds?.threadId, sandboxPolicy: { type: 'workspaceWrite', writableRoots: [setup.workspace] } });
    // The input is the user's words alone, one text item.
    expect(turnStart?.input).toEqual([{ type: 'text', text: 'hello there' }]);
  });

  it('continues the same thread on the same child at the next turn, without resuming it', async () => {
    const runtime = setup.createPool().runtimeFor(1, setup.conversation());
    const first = await runtime.runTurn(turnRequest('one'));
    const second = await runtime.runTurn(turnRequest('two', { runtimeIds: first.runtimeIds }));

    expect(second).toMatchObject({ outcome: 'completed', text: 'codex: two', runtimeIds: { threadId: first.runtimeIds?.threadId } });
    const log = setup.readLog();
    expect(requestsNamed(log, 'thread/start')).toHaveLength(1);
    expect(requestsNamed(log, 'thread/resume')).toHaveLength(0);
    expect(new Set(log.map((line) => line.pid)).size).toBe(1);
  });

  it('ignores unknown notifications, unknown items and unknown fields', async () => {
    const result = await setup.createPool().runtimeFor(1, setup.conversation()).runTurn(turnRequest('unknown'));
    expect(result).toMatchObject({ outcome: 'completed', text: 'codex: unknown things ignored' });
    expect(result.entries).toEqual([{ role: 'assistant', content: 'codex: unknown things ignored' }]);
  });

  it('fails MODEL_FAILED with the message of an error notification and a failed turn', async () => {
    const result = await setup.createPool().runtimeFor(1, setup.conversation()).runTurn(turnRequest('fail'));
    expect(result).toMatchObject({ outcome: 'failed', failure: { code: 'MODEL_FAILED', message: 'fake upstream failure' } });
  });

  it('goes on after an error notification Codex retries by itself', async () => {
    const result = await setup.createPool().runtimeFor(1, setup.conversation()).runTurn(turnRequest('flaky'));
    expect(result).toMatchObject({ outcome: 'completed', text: 'codex: answered after a retry' });
  });
});

describe('command approvals', () => {
  it('approved: accept is sent, the command runs, and the call and its result are in the entries', async () => {
    const { askUser, questions } = answering('approved');
    const result = await setup.createPool().runtimeFor(1, setup.conversation()).runTurn(turnRequest('run: ls -la', { askUser }));

    expect(questions).toEqual([{ kind: 'command', summary: 'run `ls -la`', detail: `$ ls -la\nin ${setup.workspace}\nreason: the fake wants to run a command` }]);
    expect(decisionsSent(setup)).toEqual(['accept']);
    expect(result).toMatchObject({ outcome: 'completed', text: 'codex: ran ls -la', toolIterations: 1 });
    const [call, toolResult, reply] = result.entries;
    expect(call).toMatchObject({ role: 'assistant', toolCalls: [{ name: 'shell' }] });
    const callId = call?.role === 'assistant' ? call.toolCalls?.[0]?.id : undefined;
    expect(JSON.parse(call?.role === 'assistant' ? (call.toolCalls?.[0]?.arguments ?? '') : '')).toEqual({ command: 'ls -la', cwd: setup.workspace });
    expect(toolResult).toEqual({ role: 'tool', toolCallId: callId, toolName: 'shell', content: 'exit code 0\nran ls -la\n' });
    expect(reply).toEqual({ role: 'assistant', content: 'codex: ran ls -la' });
  });

  it('approved for the session: acceptForSession is sent, and the same command is not asked again', async () => {
    const { askUser, questions } = answering('approved_for_session');
    const runtime = setup.createPool().runtimeFor(1, setup.conversation());
    const first = await runtime.runTurn(turnRequest('run: make test', { askUser }));
    const second = await runtime.runTurn(turnRequest('run: make test', { askUser, runtimeIds: first.runtimeIds }));

    expect(decisionsSent(setup)).toEqual(['acceptForSession']);
    expect(questions).toHaveLength(1);
    expect(second).toMatchObject({ outcome: 'completed', text: 'codex: ran make test' });
  });

  it('denied: decline is sent, the turn goes on, the call has a declined result', async () => {
    const { askUser } = answering('denied');
    const result = await setup.createPool().runtimeFor(1, setup.conversation()).runTurn(turnRequest('run: rm -rf build', { askUser }));

    expect(decisionsSent(setup)).toEqual(['decline']);
    expect(result).toMatchObject({ outcome: 'completed', text: 'codex: rm -rf build was declined', toolIterations: 1 });
    expect(result.entries[1]).toMatchObject({ role: 'tool', toolName: 'shell', content: expect.stringMatching(/^declined/) });
  });

  it('unanswered (no way to ask): decline is sent (fail closed)', async () => {
    const result = await setup.createPool().runtimeFor(1, setup.conversation()).runTurn(turnRequest('run: ls'));
    expect(decisionsSent(setup)).toEqual(['decline']);
    expect(result).toMatchObject({ outcome: 'completed', text: 'codex: ls was declined' });
  });

  it('cancelled: cancel is sent and the turn ends interrupted, its tool call with a result', async () => {
    const { askUser } = answering('cancelled');
    const result = await setup.createPool().runtimeFor(1, setup.conversation()).runTurn(turnRequest('run: ls', { askUser }));

    expect(decisionsSent(setup)).toEqual(['cancel']);
    expect(result.outcome).toBe('interrupted');
    expect(result.entries.map((entry) => entry.role)).toEqual(['assistant', 'tool']);
  });

  it('autoApprove: accept without asking', async () => {
    const { askUser, questions } = answering('denied');
    const result = await setup.createPool().runtimeFor(1, setup.conversation({ autoApprove: true })).runTurn(turnRequest('run: ls', { askUser }));
    expect(questions).toEqual([]);
    expect(decisionsSent(setup)).toEqual(['accept']);
    expect(result).toMatchObject({ outcome: 'completed', text: 'codex: ran ls' });
  });
});

describe('file change approvals and the older vocabulary', () => {
  it('a file change: asked as a file change, accept sent, an apply_patch call with its result', async () => {
    const { askUser, questions } = answering('approved');
    const result = await setup.createPool().runtimeFor(1, setup.conversation()).runTurn(turnRequest('edit: src/app.ts', { askUser }));

    expect(questions[0]).toMatchObject({ kind: 'file_change', summary: 'change src/app.ts' });
    expect(decisionsSent(setup)).toEqual(['accept']);
    expect(result).toMatchObject({ outcome: 'completed', text: 'codex: edited src/app.ts', toolIterations: 1 });
    expect(result.entries[0]).toMatchObject({ role: 'assistant', toolCalls: [{ name: 'apply_patch' }] });
    expect(result.entries[1]).toMatchObject({ role: 'tool', toolName: 'apply_patch', content: 'applied: src/app.ts' });
  });

  it('execCommandApproval is answered approved / approved_for_session / denied', async () => {
    const runtime = setup.createPool().runtimeFor(1, setup.conversation());
    const approved = await runtime.runTurn(turnRequest('legacy-run: ls', answering('approved')));
    const denied = await runtime.runTurn(turnRequest('legacy-run: rm x', { ...answering('denied'), runtimeIds: approved.runtimeIds }));
    const forSession = await runtime.runTurn(turnRequest('legacy-edit: a.txt', { ...answering('approved_for_session'), runtimeIds: approved.runtimeIds }));

    expect(decisionsSent(setup)).toEqual(['approved', 'denied', 'approved_for_session']);
    expect(approved).toMatchObject({ outcome: 'completed', text: 'codex: ran ls' });
    expect(denied).toMatchObject({ outcome: 'completed', text: 'codex: rm x was declined' });
    expect(forSession).toMatchObject({ outcome: 'completed', text: 'codex: edited a.txt' });
  });

  it('a cancel in the older vocabulary is denied, then turn/interrupt, and the turn ends interrupted', async () => {
    const result = await setup.createPool().runtimeFor(1, setup.conversation()).runTurn(turnRequest('legacy-run: ls', answering('cancelled')));
    expect(decisionsSent(setup)).toEqual(['denied']);
    // Sent right after the answer; the fake may log it just after the turn ended.
    await vi.waitFor(() => {
      expect(requestsNamed(setup.readLog(), 'turn/interrupt')[0]?.received.params).toEqual({ threadId: result.runtimeIds?.threadId, turnId: result.runtimeIds?.turnId });
    }, waitLimit);
    expect(result.outcome).toBe('interrupted');
  });
});

describe('other server requests', () => {
  it('an unknown server request gets -32601 and the turn completes', async () => {
    const result = await setup.createPool().runtimeFor(1, setup.conversation()).runTurn(turnRequest('ask-user'));
    expect(clientAnswers(setup.readLog())).toContainEqual(expect.objectContaining({ error: expect.objectContaining({ code: -32601 }) }));
    expect(result).toMatchObject({ outcome: 'completed', text: 'codex: requestUserInput was refused (-32601), going on' });
  });
});
