/**
 * The demo's runtime (`npm run demo -- --runtime openai|codex`). `codex` runs
 * the worker with AGENT_RUNTIME=codex against the fake Codex app-server of
 * apps/sim (no Codex install or login needed), or against the CODEX_COMMAND
 * in the environment when one is set (a real `codex app-server`).
 */
import { join } from 'node:path';

export type DemoRuntime = 'openai' | 'codex';

/** The fake app-server's executable entry (apps/sim/README.md): the one place the demo names it. */
export const fakeCodexEntry = 'apps/sim/bin/fake-codex-app-server.mjs';

export interface DemoRuntimeChoice {
  /** Env for the worker (and the gateway, which shows the default runtime). */
  env: Record<string, string>;
  /** One line for the terminal: what runs the turns. */
  description: string;
}

export function parseDemoRuntime(given: string | undefined): DemoRuntime {
  if (given === undefined || given === 'openai' || given === 'codex') return given ?? 'openai';
  throw new Error(`--runtime must be openai or codex (got "${given}")`);
}

export function chooseDemoRuntime(runtime: DemoRuntime, repoRoot: string, dataDir: string, env: NodeJS.ProcessEnv): DemoRuntimeChoice {
  if (runtime === 'openai') return { env: { AGENT_RUNTIME: 'openai' }, description: 'the openai runtime (chat completions)' };
  const own = env.CODEX_COMMAND?.trim();
  const command = own || [process.execPath, join(repoRoot, fakeCodexEntry)].map(quoteArgument).join(' ');
  return {
    env: {
      AGENT_RUNTIME: 'codex',
      CODEX_COMMAND: command,
      CODEX_WORKSPACES: join(dataDir, 'demo-codex-workspaces'),
      CODEX_HOMES: join(dataDir, 'demo-codex-homes'),
      // The fake's threads outlive its process (a worker restart resumes them); its log shows every message it got.
      FAKE_CODEX_STATE_DIR: join(dataDir, 'demo-fake-codex-state'),
      FAKE_CODEX_LOG: join(dataDir, 'demo-fake-codex-log', 'fake-codex.jsonl'),
      // A child gets only an allow-list of the worker's environment: the fake's settings are passed on by name.
      ...(own ? {} : { CODEX_ENV_PASSTHROUGH: 'FAKE_CODEX_STATE_DIR,FAKE_CODEX_LOG', ...fakeSandboxPaths(repoRoot, dataDir) }),
    },
    description: own ? `the codex runtime (CODEX_COMMAND=${own})` : 'the codex runtime against the fake Codex app-server (apps/sim); try "hang", "die" or "run: ls"',
  };
}

/**
 * The fake runs in the Codex sandbox like a real child (docs/codex.md, "How
 * a child is confined"): it reads its sources, tsx and the tsconfig they
 * extend, and writes its threads and its log (their own directories, so no
 * child sees the demo's other logs).
 */
function fakeSandboxPaths(repoRoot: string, dataDir: string): Record<string, string> {
  return {
    CODEX_SANDBOX_READ_PATHS: ['apps/sim', 'node_modules', 'tsconfig.base.json'].map((path) => join(repoRoot, path)).join(','),
    CODEX_SANDBOX_WRITE_PATHS: [join(dataDir, 'demo-fake-codex-state'), join(dataDir, 'demo-fake-codex-log')].join(','),
  };
}

/** One argument of a command line, quoted only when it must be. */
function quoteArgument(argument: string): string {
  return /^[\w@%+=:,./-]+$/.test(argument) ? argument : `"${argument.replace(/(["\\$`])/g, '\\$1')}"`;
}
