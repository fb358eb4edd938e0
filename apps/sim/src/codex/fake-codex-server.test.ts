import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeCodexServer, type AnsweredRequest } from './fake-codex-server.ts';
import { createFakeThreadStore } from './fake-codex-threads.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function startFake(stateDir = mkdtempSync(join(tmpdir(), 'fake-codex-'))) {
  dirs.push(stateDir);
  const written: Record<string, unknown>[] = [];
  const recorded: { message: unknown; answering?: AnsweredRequest }[] = [];
  const server = createFakeCodexServer(
    {
      write: (line) => written.push(JSON.parse(line) as Record<string, unknown>),
      record: (message, answering) => recorded.push({ message, ...(answering ? { answering } : {}) }),
      exit: () => {},
    },
    createFakeThreadStore(stateDir),
  );
  const send = (message: object | string) => server.receive(typeof message === 'string' ? message : JSON.stringify(message));
  return { written, recorded, send, stateDir };
}

describe('the fake app-server', () => {
  it('never crashes on bad input and answers what it cannot serve with an error', () => {
    const { written, send } = startFake();
    send({ id: 1, method: 'thread/start', params: {} });
    send('not json');
    send('42');
    send({ id: 2, method: 'initialize', params: { clientInfo: { name: 't', version: '1' } } });
    send({ id: 3, method: 'toString' });
    send({ id: 4, method: 'thread/resume', params: { threadId: '../../etc/passwd' } });
    send({ id: 5, method: 'turn/start', params: { threadId: 'nope', input: 'not a list' } });
    send({ id: 6, method: 'initialize' });

    expect(written).toEqual([
      { id: 1, error: { code: -32600, message: 'Not initialized' } },
      { id: null, error: { code: -32700, message: 'Parse error' } },
      expect.objectContaining({ id: 2, result: expect.objectContaining({ userAgent: expect.any(String) }) }),
      { id: 3, error: { code: -32601, message: 'unknown method toString' } },
      { id: 4, error: { code: -32600, message: 'no thread ../../etc/passwd' } },
      { id: 5, error: { code: -32600, message: 'thread nope is not loaded' } },
      { id: 6, error: { code: -32600, message: 'Already initialized' } },
    ]);
  });

  it('a thread started by one fake process is resumed by the next', () => {
    const first = startFake();
    first.send({ id: 1, method: 'initialize', params: {} });
    first.send({ id: 2, method: 'thread/start', params: { cwd: '/w' } });
    const threadId = (first.written[1]?.result as { thread: { id: string } }).thread.id;

    const second = startFake(first.stateDir);
    second.send({ id: 1, method: 'initialize', params: {} });
    second.send({ id: 2, method: 'thread/resume', params: { threadId } });
    expect(second.written[1]).toMatchObject({ id: 2, result: { thread: { id: threadId } } });
  });

  it('keeps developer instructions out of the stored user message, and like Codex applies them only when it loads the thread', async () => {
    const { written, send } = startFake();
    send({ id: 1, method: 'initialize', params: {} });
    send({ id: 2, method: 'thread/start', params: { cwd: '/w', developerInstructions: 'a note' } });
    const threadId = (written[1]?.result as { thread: { id: string } }).thread.id;
    // Already loaded: new instructions on resume are not applied.
    send({ id: 3, method: 'thread/resume', params: { threadId, developerInstructions: 'another note' } });
    send({ id: 4, method: 'turn/start', params: { threadId, input: [{ type: 'text', text: 'show-instructions' }] } });
    await expect.poll(() => written.some((message) => message.method === 'turn/completed')).toBe(true);

    const items = written.filter((message) => message.method === 'item/completed').map((message) => (message.params as { item: Record<string, unknown> }).item);
    expect(items).toEqual([
      expect.objectContaining({ type: 'userMessage', content: [{ type: 'text', text: 'show-instructions' }] }),
      expect.objectContaining({ type: 'agentMessage', text: 'codex: instructions: a note' }),
    ]);
  });

  it('logs an answer to its approval request with the request it answers, so a reader knows which command a decision was for', async () => {
    const { written, recorded, send } = startFake();
    send({ id: 1, method: 'initialize', params: {} });
    send({ id: 2, method: 'thread/start', params: { cwd: '/w' } });
    const threadId = (written[1]?.result as { thread: { id: string } }).thread.id;
    send({ id: 3, method: 'turn/start', params: { threadId, input: [{ type: 'text', text: 'c1: please\nrun: make it' }] } });
    await expect.poll(() => written.find((message) => message.method === 'item/commandExecution/requestApproval')).toBeDefined();
    const asked = written.find((message) => message.method === 'item/commandExecution/requestApproval') as { id: number };
    send({ id: asked.id, result: { decision: 'accept' } });
    await expect.poll(() => written.some((message) => message.method === 'turn/completed')).toBe(true);

    expect(recorded.at(-1)).toEqual({ message: { id: asked.id, result: { decision: 'accept' } }, answering: { method: 'item/commandExecution/requestApproval', command: 'make it', itemId: expect.any(String) } });
    expect(recorded.slice(0, -1).every((entry) => entry.answering === undefined)).toBe(true);
  });
});
