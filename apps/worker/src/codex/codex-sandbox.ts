import { homedir } from 'node:os';
import { join } from 'node:path';
import { chmod, mkdir } from 'node:fs/promises';
import { checkCodexSandbox, conversationUid, findExecutable, wrapCodexCommand, type ChildEnvOutcome, type CodexSandboxSettings } from '@switchboard/agent';
import type { WorkerConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/logger';
import { findOperatorCodexHome } from './codex-home.ts';
import { startCodexNet, type CodexNet, type NetConfig } from './codex-net.ts';
import { handOverToUid } from './codex-sandbox-owner.ts';

/**
 * Whether this worker confines its Codex children in bubblewrap
 * (docs/codex.md, "How a child is confined"; issue 30, finding 1), decided
 * once at start: `bwrap` found and run once, or the operator's explicit
 * `CODEX_SANDBOX=off`. Never a silent fall-back: a bwrap that is missing or
 * cannot make its namespaces here means no Codex child is started at all,
 * said in one line at start, and each Codex turn fails with a notice.
 */
export type CodexConfinement =
  | { kind: 'bwrap'; settings: CodexSandboxSettings; net?: CodexNet; uidBase?: number }
  | { kind: 'off' }
  | { kind: 'unavailable'; reason: string };

export type SandboxConfig = Pick<WorkerConfig, 'AGENT_RUNTIME' | 'CODEX_SANDBOX' | 'CODEX_SANDBOX_READ_PATHS' | 'CODEX_SANDBOX_WRITE_PATHS' | 'CODEX_WORKSPACES' | 'CODEX_HOMES' | 'CODEX_SANDBOX_NETWORK' | 'CODEX_SANDBOX_USER' | 'CODEX_SANDBOX_UID_BASE'> & NetConfig;

/** Runs the check (at the worker's start) and logs its one line; the promise is what every Codex turn awaits. */
export async function checkCodexConfinement(config: SandboxConfig, log: Logger, source: Readonly<Record<string, string | undefined>> = process.env): Promise<CodexConfinement> {
  if (config.CODEX_SANDBOX === 'off') {
    log.warn({ sandbox: 'off' }, 'CODEX_SANDBOX=off: Codex children run unconfined, as the worker\'s user in its namespaces (docs/codex.md, "How a child is confined")');
    return { kind: 'off' };
  }
  const searchPath = source.PATH || '/usr/local/bin:/usr/bin:/bin';
  const isolateNetwork = config.CODEX_SANDBOX_NETWORK === 'provider';
  const runAs = await findRunAs(config, searchPath);
  const check = await checkCodexSandbox(searchPath, { isolateNetwork, runAs: runAs?.setpriv ? { setpriv: runAs.setpriv, uid: runAs.uid } : undefined });
  if (!check.ok) return unavailable(config, log, { reason: check.reason, fix: runAs ? `${check.fix}; or CODEX_SANDBOX_USER=worker to run them as root` : check.fix });
  if (runAs && !runAs.setpriv) return unavailable(config, log, { reason: "setpriv (util-linux) is not on PATH, and a root worker's children run as their own uid", fix: 'install util-linux, or set CODEX_SANDBOX_USER=worker' });
  const settings = { ...sandboxSettingsOf(config, check.bwrap, source), setpriv: runAs?.setpriv };
  const uidBase = runAs ? config.CODEX_SANDBOX_UID_BASE : undefined;
  // Another uid must pass through the roots to its own directory (not list them: 0711).
  if (runAs) for (const root of [config.CODEX_WORKSPACES, config.CODEX_HOMES]) await mkdir(root, { recursive: true }).then(() => chmod(root, 0o711));
  if (!isolateNetwork) {
    log.warn({ network: 'shared' }, 'CODEX_SANDBOX_NETWORK=shared: Codex children share the worker\'s network (Postgres, Redis and the gateway reachable; docs/codex.md, "The child\'s network")');
    return { kind: 'bwrap', settings, uidBase };
  }
  const net = await startCodexNet(config, log, { source, otherUids: runAs !== undefined });
  return { kind: 'bwrap', settings: { ...settings, netProxySocket: net.socketPath }, net, uidBase };
}

/** A root worker with CODEX_SANDBOX_USER=conversation: its children change uid (the check runs as the first). */
async function findRunAs(config: SandboxConfig, searchPath: string): Promise<{ setpriv?: string; uid: number } | undefined> {
  if (process.getuid?.() !== 0 || config.CODEX_SANDBOX_USER !== 'conversation') return undefined;
  return { setpriv: await findExecutable('setpriv', searchPath), uid: config.CODEX_SANDBOX_UID_BASE };
}

function unavailable(config: SandboxConfig, log: Logger, why: { reason: string; fix: string }): CodexConfinement {
  // Only an error where Codex is this worker's default; elsewhere just an operator's per-conversation choice would need it.
  const level = config.AGENT_RUNTIME === 'codex' ? 'error' : 'warn';
  log[level]({ code: 'CODEX_SANDBOX_UNAVAILABLE' }, `no Codex child will be started: CODEX_SANDBOX=bwrap, but ${why.reason}; ${why.fix}`);
  return { kind: 'unavailable', reason: why.reason };
}

/** What every child's sandbox shows and hides on this worker. */
export function sandboxSettingsOf(config: SandboxConfig, bwrap: string, source: Readonly<Record<string, string | undefined>>): CodexSandboxSettings {
  return {
    bwrap,
    readPaths: config.CODEX_SANDBOX_READ_PATHS,
    writePaths: config.CODEX_SANDBOX_WRITE_PATHS,
    // The roots are hidden where a shown path contains them; this conversation's own directories are bound on top.
    hiddenPaths: [source.HOME || homedir(), findOperatorCodexHome(source), join(process.cwd(), '.env'), config.CODEX_WORKSPACES, config.CODEX_HOMES],
    nodePath: process.execPath,
    searchPath: source.PATH || '/usr/local/bin:/usr/bin:/bin',
  };
}

/**
 * The pool's `childEnv` under a confinement: the environment as prepared
 * (`createCodexChildEnv`), and under bwrap the command wrapped in the
 * conversation's sandbox, its home being the prepared HOME.
 */
export function confineChildEnv(
  prepare: (conversationId: number) => Promise<ChildEnvOutcome>,
  confinement: Promise<CodexConfinement>,
  workspaceOf: (conversationId: number) => Promise<string | undefined>,
): (conversationId: number, argv: readonly string[]) => Promise<ChildEnvOutcome> {
  return async (conversationId, argv) => {
    const prepared = await prepare(conversationId);
    const confined = await confinement;
    if (prepared.kind === 'failed' || confined.kind === 'off') return prepared;
    if (confined.kind === 'unavailable') return { kind: 'failed', reason: `CODEX_SANDBOX_UNAVAILABLE: ${confined.reason}` };
    const workspace = await workspaceOf(conversationId);
    const home = prepared.env.HOME;
    if (!workspace || !home) return { kind: 'failed', reason: 'the workspace or home to confine the child to is missing' };
    const uid = confined.uidBase === undefined ? undefined : conversationUid(confined.uidBase, conversationId);
    if (uid !== undefined) await handOverToUid({ workspace, home }, uid);
    return { ...prepared, argv: await wrapCodexCommand(confined.settings, argv, { workspace, home, uid }) };
  };
}
