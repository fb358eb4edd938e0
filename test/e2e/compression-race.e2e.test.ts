import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AdvisoryLock, createDbClient, tryLockSessionForCompression } from '@switchboard/db';
import { repoRoot } from '@switchboard/harness';
import { conversationState } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';
import { redisUrl } from '../support/test-env.ts';
import { chatPrefix, lastUserText, modelRequests, requestsOfChat, waitForCondition, waitForIdle, waitForModelRequest, type ModelRequest } from '../support/turn-helpers.ts';

/**
 * Compression under contention and crashes (docs/compression.md, issue 4), with
 * compressions run by separate Node processes (test/support/compress-once.ts)
 * through the worker's own compressConversation. The system's worker has the
 * default 128k context, so it never compresses by itself here; the
 * compress-once processes get a 1,900-token context, whose 380-token kept
 * tail leaves most of an 8-message session to summarise.
 */

const transcriptPrefix = 'Transcript to summarise:';
const summaryText = 'SUMMARY: the user sent long pangrams, each answered with an echo.';
const filler = 'the quick brown fox jumps over the lazy dog '.repeat(14).trim();
const chats = { race: 4001, crash: 4002, grown: 4003 };
const long = (chat: number, n: number) => `${chatPrefix(chat)} m${String(n).padStart(2, '0')}: ${filler}`;
const summariserFor = (chat: number) => `^${transcriptPrefix}[\\s\\S]*${chatPrefix(chat)}`;

const script = {
  rules: [
    // The crash case: the first summary of that chat never answers (the process is killed while it waits).
    { matchRegex: summariserFor(chats.crash), hang: true, times: 1 },
    // The grown case: a summary slow enough for a whole turn to commit while it is written.
    { matchRegex: summariserFor(chats.grown), reply: summaryText, delayMs: 3000, times: 1 },
    // Slow enough that all racers are past their lock attempt while the winner still waits for it.
    { match: transcriptPrefix, reply: summaryText, delayMs: 1500 },
  ],
};

// Spelled as in test/support/compress-once.ts.
const readyLine = 'READY';
const resultMarker = 'COMPRESS-ONCE ';

interface CompressResult {
  outcome: string;
  oldSessionId?: number;
  childSessionId?: number;
  summarisedMessages?: number;
}

interface CompressOnce {
  child: ChildProcess;
  /** Resolves when the process is set up and waits at its start gate. */
  ready: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; result?: CompressResult; output: string }>;
  go(): void;
}

describe('compression races and crashes across processes', () => {
  let system: TestSystem;
  const started: CompressOnce[] = [];

  beforeAll(async () => {
    system = await TestSystem.start();
    await system.setModelScript(script);
  }, 60_000);
  afterEach(() => {
    for (const p of started.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  });
  afterAll(async () => {
    await system?.close();
  });

  function startCompressOnce(conversationId: number, options: { gate: boolean }): CompressOnce {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/compress-once.ts'], {
      cwd: repoRoot,
      env: {
        ...process.env,
        DATABASE_URL: system.databaseUrl,
        REDIS_URL: redisUrl(),
        REDIS_PREFIX: system.redisPrefix,
        MODEL_BASE_URL: `${system.simUrl}/v1`,
        MODEL_CONTEXT_TOKENS: '1900',
        COMPRESSION_KEEP_RATIO: '0.2',
        SUMMARY_TIMEOUT_MS: '60000',
        LOG_LEVEL: 'warn',
        CONVERSATION_ID: String(conversationId),
        ...(options.gate ? { COMPRESS_ONCE_GATE: 'stdin' } : {}),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let result: CompressResult | undefined;
    let markReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output += `${line}\n`;
      if (line === readyLine) markReady();
      if (line.startsWith(resultMarker)) result = JSON.parse(line.slice(resultMarker.length)) as CompressResult;
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; result?: CompressResult; output: string }>((resolve) =>
      child.once('exit', (code, signal) => setImmediate(() => resolve({ code, signal, result, output }))),
    );
    const readyOrExited = Promise.race([ready, exited.then((e) => Promise.reject(new Error(`compress-once exited before it was ready (${e.code ?? e.signal}): ${e.output}`)))]);
    // Only gated runs await it; an ungated run exits without ever being ready.
    readyOrExited.catch(() => undefined);
    const handle: CompressOnce = {
      child,
      ready: readyOrExited,
      exited,
      go: () => child.stdin!.end('go\n'),
    };
    started.push(handle);
    return handle;
  }

  async function converse(chat: number, from: number, to: number): Promise<void> {
    for (let n = from; n <= to; n++) {
      const { status } = await system.sendTelegram({ chatId: chat, text: long(chat, n) });
      expect(status).toBe(200);
      const sent = await system.waitForTelegram(chat, n);
      expect(sent.at(-1)?.text).toBe(`echo: ${long(chat, n)}`);
    }
  }

  async function sessionsOf(conversationId: number) {
    return system.sql<{ id: number; parent: number | null; status: string; compress_failures: number }[]>`
      select id::int as id, parent_session_id::int as parent, status, compress_failures from sessions where conversation_id = ${conversationId} order by id`;
  }

  async function summarisationRequests(chat: number): Promise<ModelRequest[]> {
    return (await modelRequests(system)).filter((r) => isSummaryOf(r, chat));
  }

  const isSummaryOf = (r: ModelRequest, chat: number) => lastUserText(r).startsWith(transcriptPrefix) && lastUserText(r).includes(`${chatPrefix(chat)} `);

  /** Backends holding the compression lock of a session (a bigint advisory key shows as classid = high 32 bits = the namespace, objid = low 32 bits = the session id, objsubid 1). */
  async function lockHolders(sessionId: number): Promise<number[]> {
    const rows = await system.sql<{ pid: number }[]>`
      select pid from pg_locks
      where locktype = 'advisory' and classid = ${AdvisoryLock.CompressSession} and objid = ${sessionId} and objsubid = 1 and granted`;
    return rows.map((r) => r.pid);
  }

  // The timeout is generous: eight Node processes start at once, and CI machines can be small and busy.
  it('8 processes compress one session at once: one wins, one summary, one child; 7 more turns run on it', async () => {
    const chat = chats.race;
    await converse(chat, 1, 8);
    await waitForIdle(system, [chat]);
    const conversation = await conversationState(system, chat);
    const rootId = conversation.current_session_id as number; // set by the turns above

    const racers = Array.from({ length: 8 }, () => startCompressOnce(conversation.id, { gate: true }));
    await Promise.all(racers.map((r) => r.ready));
    for (const racer of racers) racer.go();
    const results = await Promise.all(racers.map((r) => r.exited));

    for (const r of results) expect(r.code, r.output).toBe(0);
    const outcomes = results.map((r) => r.result?.outcome);
    expect(outcomes.filter((o) => o === 'compressed')).toHaveLength(1);
    // The losers found the lock taken and did not wait (docs/compression.md).
    expect(outcomes.filter((o) => o === 'locked')).toHaveLength(7);
    const winner = results.find((r) => r.result?.outcome === 'compressed')!.result!;
    expect(winner.oldSessionId).toBe(rootId);

    expect(await summarisationRequests(chat)).toHaveLength(1);
    const sessions = await sessionsOf(conversation.id);
    expect(sessions).toEqual([
      { id: rootId, parent: null, status: 'compressed', compress_failures: 0 },
      { id: winner.childSessionId, parent: rootId, status: 'active', compress_failures: 0 },
    ]);
    expect((await conversationState(system, chat)).current_session_id).toBe(winner.childSessionId);
    expect(await lockHolders(rootId)).toEqual([]);

    // Seven more turns through the gateway and worker, all on the child.
    await converse(chat, 9, 15);
    await waitForIdle(system, [chat]);
    expect(await sessionsOf(conversation.id)).toHaveLength(2);
    const stored = await system.sql<{ content: string; session_id: number }[]>`
      select content, session_id::int as session_id from messages
      where role = 'user' and session_id = any(${[rootId, winner.childSessionId!]}) order by session_id, seq`;
    for (let n = 9; n <= 15; n++) expect(stored.filter((m) => m.content === long(chat, n)).map((m) => m.session_id)).toEqual([winner.childSessionId]);
    const ninth = requestsOfChat(await modelRequests(system), chat).find((r) => lastUserText(r) === long(chat, 9));
    expect(ninth?.body.messages[1]?.content).toBe(`Summary of the earlier conversation (written by the gateway):\n${summaryText}`);
    expect(await summarisationRequests(chat)).toHaveLength(1);
  }, 120_000);

  it('a compressing process SIGKILLed mid-summary frees the lock at once; the next compression succeeds', async () => {
    const chat = chats.crash;
    await converse(chat, 1, 8);
    await waitForIdle(system, [chat]);
    const conversation = await conversationState(system, chat);
    const rootId = conversation.current_session_id as number; // set by the turns above

    const doomed = startCompressOnce(conversation.id, { gate: false });
    // The next compression starts up meanwhile and waits at its gate (start-up costs seconds; the wait is not what is measured).
    const next = startCompressOnce(conversation.id, { gate: true });
    const hung = await waitForModelRequest(system, (r) => isSummaryOf(r, chat), { timeoutMs: 30_000, what: 'the summary that will hang' });
    const holders = await lockHolders(rootId);
    expect(holders).toHaveLength(1);

    const killedAt = performance.now();
    doomed.child.kill('SIGKILL');
    // Postgres ends the backend when its client socket closes: no TTL, no waiting on a timeout.
    await waitForCondition('the advisory lock to be released', async () => (await lockHolders(rootId)).length === 0, 2000, 20);
    const freedMs = performance.now() - killedAt;
    expect(freedMs).toBeLessThan(2000);
    const exit = await doomed.exited;
    expect(exit.signal).toBe('SIGKILL');
    expect(exit.result).toBeUndefined();
    await waitForModelRequest(system, (r) => r.id === hung.id, { state: 'aborted', what: 'the hung summary to be aborted' });

    // Nothing was committed or counted as a failure: the session is as it was.
    expect(await sessionsOf(conversation.id)).toEqual([{ id: rootId, parent: null, status: 'active', compress_failures: 0 }]);

    await next.ready;
    next.go();
    const done = await next.exited;
    expect(done.code, done.output).toBe(0);
    expect(done.result).toMatchObject({ outcome: 'compressed', oldSessionId: rootId });
    const sessions = await sessionsOf(conversation.id);
    expect(sessions.map((s) => [s.parent, s.status])).toEqual([
      [null, 'compressed'],
      [rootId, 'active'],
    ]);
    expect((await conversationState(system, chat)).current_session_id).toBe(done.result?.childSessionId);
    expect(await summarisationRequests(chat)).toHaveLength(2);

    // And the conversation goes on, on the child.
    await converse(chat, 9, 9);
    const [stored] = await system.sql<{ session_id: number }[]>`
      select m.session_id::int as session_id from messages m where m.content = ${long(chat, 9)} and m.role = 'user'`;
    expect(stored?.session_id).toBe(done.result?.childSessionId);
  }, 60_000);

  // sessions.id is a bigint identity: the lock key must hold ids past 2^31 (an int4 key would
  // throw "integer out of range" there and compression would fail open to no lock at all).
  it('takes the compression lock for any session id, including ids past 2^31', async () => {
    const sessionId = 2 ** 31;
    // A client of its own: system.sql is a plain postgres.js client for assertions, not a Database.
    const { db, close } = createDbClient(system.databaseUrl, { max: 2 });
    try {
      const first = await tryLockSessionForCompression(db, sessionId);
      try {
        expect(first.acquired).toBe(true);
        const second = await tryLockSessionForCompression(db, sessionId);
        expect(second.acquired).toBe(false);
      } finally {
        await first.release();
      }
      const again = await tryLockSessionForCompression(db, sessionId);
      expect(again.acquired).toBe(true);
      await again.release();
    } finally {
      await close();
    }
  });

  it('a compression whose session grew while it summarised (a turn committed by another worker) is discarded, not committed without that exchange (issue 29, defect 1)', async () => {
    const chat = chats.grown;
    await converse(chat, 1, 8);
    await waitForIdle(system, [chat]);
    const conversation = await conversationState(system, chat);
    const rootId = conversation.current_session_id as number;

    // Worker A (its own process, holding no lease) is writing the summary of the root session...
    const compressing = startCompressOnce(conversation.id, { gate: false });
    await waitForModelRequest(system, (r) => isSummaryOf(r, chat), { timeoutMs: 30_000, what: 'the slow summary' });
    // ...while the system's worker runs a turn on the same session and the user gets its reply.
    await converse(chat, 9, 9);
    await waitForIdle(system, [chat]);

    const result = await compressing.exited;
    expect(result.code, result.output).toBe(0);
    // Before the fix: 'compressed', with a child built from the ids read before the turn: m09 and its reply in neither part.
    expect(result.result?.outcome).toBe('stale');
    expect((await conversationState(system, chat)).current_session_id).toBe(rootId);
    const chain = await system.sql<{ content: string }[]>`
      select m.content from messages m join conversations c on c.current_session_id = m.session_id where c.id = ${conversation.id} order by m.seq`;
    expect(chain.map((m) => m.content).slice(-2)).toEqual([long(chat, 9), `echo: ${long(chat, 9)}`]);

    // The next compression sees the whole session, the new exchange included.
    const again = await startCompressOnce(conversation.id, { gate: false }).exited;
    expect(again.result?.outcome, again.output).toBe('compressed');
    const child = await system.sql<{ content: string }[]>`select content from messages where session_id = ${again.result!.childSessionId!} order by seq`;
    expect(child.map((m) => m.content).slice(-2)).toEqual([long(chat, 9), `echo: ${long(chat, 9)}`]);
  }, 120_000);
});
