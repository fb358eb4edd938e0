import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, isAbsolute } from 'node:path';
import { checkCodexSandbox, findExecutable, splitCommandLine } from '@switchboard/agent';
import { readSetting, type CheckResult } from './doctor-checks.ts';

const install = 'install Codex as the worker\'s user (npm i -g @openai/codex, then codex login) or set CODEX_COMMAND (docs/codex.md, "Set-up")';

/**
 * The Codex runtime's set-up (docs/codex.md): with AGENT_RUNTIME=codex, the
 * program CODEX_COMMAND starts must be found (a path, or a name on PATH) and
 * CODEX_WORKSPACES and CODEX_HOMES (each conversation's own HOME and
 * CODEX_HOME) must be directories the worker can create and write. It
 * starts nothing: a Codex login is checked by Codex itself at the first turn.
 */
export async function checkCodex(env: NodeJS.ProcessEnv): Promise<CheckResult> {
  const name = 'codex';
  if (readSetting(env, 'AGENT_RUNTIME') !== 'codex') {
    return { name, status: 'skip', detail: 'AGENT_RUNTIME is not codex (a conversation an operator sets to codex needs this set-up too)' };
  }
  const command = readSetting<string>(env, 'CODEX_COMMAND');
  const workspaces = readSetting<string>(env, 'CODEX_WORKSPACES');
  if (!command || !workspaces) return { name, status: 'skip', detail: 'CODEX_COMMAND or CODEX_WORKSPACES is invalid (see config)' };
  const program = splitCommandLine(command)?.[0];
  if (!program) return { name, status: 'fail', detail: 'CODEX_COMMAND has an unterminated quote', fix: 'correct CODEX_COMMAND' };
  const found = await findExecutable(program, env.PATH ?? '');
  if (!found) return { name, status: 'fail', detail: `${program} (from CODEX_COMMAND) is not ${program.includes('/') ? 'an executable file' : 'on PATH'}`, fix: install };
  const blocked = await findUnwritable(workspaces);
  if (blocked) return { name, status: 'fail', detail: `CODEX_WORKSPACES ${workspaces}: ${blocked}`, fix: "make it a directory the worker's user can write, or set CODEX_WORKSPACES" };
  const homes = readSetting<string>(env, 'CODEX_HOMES');
  const homesBlocked = homes ? await findUnwritable(homes) : 'invalid (see config)';
  if (homesBlocked) return { name, status: 'fail', detail: `CODEX_HOMES ${homes ?? ''}: ${homesBlocked}`, fix: "make it a directory the worker's user can write, or set CODEX_HOMES" };
  return { name, status: 'ok', detail: `${program} found at ${found}; workspaces under ${workspaces}` };
}

/**
 * The sandbox each Codex child runs in (docs/codex.md, "How a child is
 * confined"): with CODEX_SANDBOX=bwrap, bubblewrap is run once as the
 * worker runs it (`true` in the same namespaces), since an installed bwrap
 * may still be refused user namespaces on this host. The worker refuses
 * every Codex turn where this fails.
 */
export async function checkCodexConfinement(env: NodeJS.ProcessEnv): Promise<CheckResult> {
  const name = 'codex sandbox';
  if (readSetting(env, 'AGENT_RUNTIME') !== 'codex') return { name, status: 'skip', detail: 'AGENT_RUNTIME is not codex (a conversation an operator sets to codex needs it too)' };
  if (readSetting(env, 'CODEX_SANDBOX') === 'off') {
    return { name, status: 'warn', detail: "CODEX_SANDBOX=off: Codex children run unconfined, as the worker's user, and can read its environment through /proc", fix: 'install bubblewrap and remove CODEX_SANDBOX=off' };
  }
  const shared = readSetting(env, 'CODEX_SANDBOX_NETWORK') === 'shared';
  const check = await checkCodexSandbox(env.PATH ?? '', { isolateNetwork: !shared });
  if (!check.ok) return { name, status: 'fail', detail: `no Codex child will be started: ${check.reason}`, fix: check.fix };
  if (shared) {
    const detail = `${check.bwrap} runs; each Codex child gets its own pid, mount and user namespaces, but shares the worker's network (CODEX_SANDBOX_NETWORK=shared): Postgres, Redis and the gateway are reachable from it`;
    return { name, status: 'warn', detail, fix: 'remove CODEX_SANDBOX_NETWORK=shared (children then reach only their model provider and CODEX_SANDBOX_ALLOW_HOSTS)' };
  }
  return { name, status: 'ok', detail: `${check.bwrap} runs; each Codex child gets its own pid, mount, user and network namespaces, and reaches only its model provider` };
}

/** Why the worker could not create or write the directory; undefined when it can (mkdir -p from the nearest existing ancestor). */
async function findUnwritable(directory: string): Promise<string | undefined> {
  if (!isAbsolute(directory)) return 'not an absolute path';
  for (let current = directory; ; current = dirname(current)) {
    const found = await stat(current).catch(() => undefined);
    if (found) {
      if (!found.isDirectory()) return `${current} is not a directory`;
      return (await access(current, constants.W_OK).then(() => true, () => false)) ? undefined : `${current} is not writable`;
    }
    if (dirname(current) === current) return 'no existing ancestor';
  }
}
