import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCodexPool, type CodexConversationOptions, type CodexPool, type CodexPoolOptions, type RunTurnRequest } from '@switchboard/agent';
import { pino } from 'pino';

/** The fake app-server as CODEX_COMMAND, the way apps/sim/README.md documents it. */
export const fakeCodexBin = fileURLToPath(new URL('../../apps/sim/bin/fake-codex-app-server.mjs', import.meta.url));
export const fakeCodexCommand = `"${process.execPath}" "${fakeCodexBin}"`;

/** vi.waitFor's limit: a child's exit is an event we poll for, and a loaded machine may take a while. */
export const waitLimit = { timeout: 10_000, interval: 20 };

export interface LoggedMessage {
  pid: number;
  received: { id?: string | number | null; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: { code: number; message: string } };
}

/** A throwaway state dir, log and workspace for the fake, and pools that are closed afterwards. */
export function createFakeCodexSetup() {
  const dir = mkdtempSync(join(tmpdir(), 'codex-runtime-test-'));
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const logFile = join(dir, 'fake-codex.log');
  const env = { ...process.env, FAKE_CODEX_STATE_DIR: join(dir, 'state'), FAKE_CODEX_LOG: logFile };
  const pools: CodexPool[] = [];
  return {
    workspace,
    env,
    conversation(overrides: Partial<CodexConversationOptions> = {}): CodexConversationOptions {
      return { cwd: workspace, profile: 'read-only', autoApprove: false, ...overrides };
    },
    createPool(overrides: Partial<CodexPoolOptions> = {}): CodexPool {
      const pool = createCodexPool({ command: fakeCodexCommand, idleMs: 60_000, maxChildren: 4, logger: pino({ level: 'silent' }), env, ...overrides });
      pools.push(pool);
      return pool;
    },
    /** Every message the fake received, in order, with the pid of the fake process that received it. */
    readLog(): LoggedMessage[] {
      let text = '';
      try {
        text = readFileSync(logFile, 'utf8');
      } catch {
        return [];
      }
      return text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as LoggedMessage);
    },
    async cleanup() {
      await Promise.all(pools.map((pool) => pool.close()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type FakeCodexSetup = ReturnType<typeof createFakeCodexSetup>;

export function turnRequest(input: string, overrides: Partial<RunTurnRequest> = {}): RunTurnRequest {
  return { instructions: '', history: [], notes: [], input: [input], signal: new AbortController().signal, ...overrides };
}

/** The client's answers (results and errors) the fake received. */
export function clientAnswers(log: LoggedMessage[]): LoggedMessage['received'][] {
  return log.map((line) => line.received).filter((message) => message.method === undefined && message.id !== undefined && message.id !== null);
}

export function requestsNamed(log: LoggedMessage[], method: string): LoggedMessage[] {
  return log.filter((line) => line.received.method === method);
}

/** Whether a process with this pid still runs. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
