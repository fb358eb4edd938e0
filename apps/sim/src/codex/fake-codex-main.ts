import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createFakeCodexServer } from './fake-codex-server.ts';
import { createFakeThreadStore } from './fake-codex-threads.ts';

/**
 * The fake app-server's process: stdin/stdout, FAKE_CODEX_STATE_DIR (threads
 * that outlive the process; default a dir under the system tmp dir) and
 * FAKE_CODEX_LOG (every message received, one JSON line each, with this
 * process's pid, an id of its own that stays unique where pids are not (a
 * child in its own pid namespace), the time it arrived, and for an answer the
 * request it answers); FAKE_CODEX_SILENT_INIT=1 never answers `initialize` (a
 * child stuck in its handshake). Run it through apps/sim/bin/fake-codex-app-server.mjs.
 */
/**
 * This process among all the fakes of a run. Its pid does not tell: in a
 * Codex sandbox (its own pid namespace) every fake is pid 2. Also put in its
 * title, so a test can see from outside whether it still runs (`isFakeRunning`).
 */
const instance = randomUUID();
process.title = `fake-codex ${instance}`;
const stateDir = process.env.FAKE_CODEX_STATE_DIR || join(tmpdir(), 'switchboard-fake-codex-state');
const logFile = process.env.FAKE_CODEX_LOG;

const server = createFakeCodexServer(
  {
    write: (line) => process.stdout.write(`${line}\n`),
    record: (message, answering) => {
      if (logFile) appendFileSync(logFile, `${JSON.stringify({ pid: process.pid, instance, at: Date.now(), received: message, ...(answering ? { answering } : {}) })}\n`);
    },
    exit: (code) => process.exit(code),
  },
  createFakeThreadStore(stateDir),
  { silentInit: process.env.FAKE_CODEX_SILENT_INIT === '1' },
);

createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => server.receive(line));
// The client closing our stdin is how a polite close begins (Codex exits too).
process.stdin.on('end', () => process.exit(0));
