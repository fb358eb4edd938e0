import { chmod, copyFile, mkdir, readFile, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { buildCodexChildEnv, readProviderKeyName, type ChildEnvOutcome } from '@switchboard/agent';
import { isInsideDirectory, resolveWorkspacePath } from '@switchboard/core';

/**
 * Each Codex conversation's own HOME, CODEX_HOME and TMPDIR under
 * CODEX_HOMES (docs/codex.md, "What a child gets"): Codex keeps every
 * thread's full transcript under `$CODEX_HOME/sessions`, so one shared
 * CODEX_HOME let any conversation read every other's (issue 30, finding 1).
 * The operator's configuration is copied in, so a provider or login set up
 * for Codex keeps working.
 */

/** What is copied from the operator's Codex home: the configuration (model, provider) and the login. */
const seededFiles = ['config.toml', 'auth.json'] as const;

export interface CodexHomeDirs {
  home: string;
  codexHome: string;
  tmpDir: string;
}

export type CodexHomeOutcome = ({ kind: 'ready' } & CodexHomeDirs) | { kind: 'failed'; reason: string };

export interface CodexChildEnvSettings {
  /** CODEX_HOMES, absolute. */
  homesRoot: string;
  /** CODEX_ENV_PASSTHROUGH. */
  passthrough: readonly string[];
  /** The worker's environment: read for the allow-list, and for where the operator's Codex home is. */
  source: Readonly<Record<string, string | undefined>>;
}

/** The operator's Codex home: CODEX_HOME as the worker has it, else ~/.codex (where `codex login` writes). */
export function findOperatorCodexHome(source: Readonly<Record<string, string | undefined>>): string {
  return source.CODEX_HOME || join(source.HOME || homedir(), '.codex');
}

/** The pool's `childEnv`: the conversation's directories made ready, then its environment built from the allow-list. */
export function createCodexChildEnv(settings: CodexChildEnvSettings): (conversationId: number) => Promise<ChildEnvOutcome> {
  const operatorHome = findOperatorCodexHome(settings.source);
  return async (conversationId) => {
    const dirs = await ensureCodexHome({ root: settings.homesRoot, conversationId, operatorHome });
    if (dirs.kind === 'failed') return dirs;
    const configToml = await readFile(join(operatorHome, 'config.toml'), 'utf8').catch(() => null);
    const env = buildCodexChildEnv({ source: settings.source, ...dirs, credentialName: readProviderKeyName(configToml), passthrough: settings.passthrough });
    return { kind: 'ready', env };
  };
}

/**
 * `<root>/<id>` (HOME), `<root>/<id>/.codex` (CODEX_HOME) and `<root>/<id>/tmp`
 * (TMPDIR), each 0700, the home's real path inside the real root (as for a
 * workspace: a link planted in the root cannot send a conversation's state
 * elsewhere), and the operator's files copied in where newer.
 */
export async function ensureCodexHome(input: { root: string; conversationId: number; operatorHome: string }): Promise<CodexHomeOutcome> {
  const planned = resolveWorkspacePath(input.root, input.conversationId);
  if (!planned.ok) return { kind: 'failed', reason: `CODEX_HOMES: ${planned.reason}` };
  try {
    await mkdir(planned.path, { recursive: true, mode: 0o700 });
    const [realRoot, home] = await Promise.all([realpath(input.root), realpath(planned.path)]);
    if (!isInsideDirectory(realRoot, home)) return { kind: 'failed', reason: 'CODEX_HOMES: outside_root' };
    const dirs = { home, codexHome: join(home, '.codex'), tmpDir: join(home, 'tmp') };
    for (const dir of [dirs.home, dirs.codexHome, dirs.tmpDir]) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      // mkdir's mode is masked by the umask and ignored for a directory that exists.
      await chmod(dir, 0o700);
    }
    for (const name of seededFiles) await seedFile(join(input.operatorHome, name), join(dirs.codexHome, name));
    return { kind: 'ready', ...dirs };
  } catch (err) {
    return { kind: 'failed', reason: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Copies an operator's file in when the conversation has none or the
 * operator's is newer (a changed config, a fresh login), and leaves a copy
 * the conversation's child refreshed since (a renewed login) alone.
 */
async function seedFile(from: string, to: string): Promise<void> {
  const source = await stat(from).catch(() => null);
  if (!source?.isFile()) return;
  const target = await stat(to).catch(() => null);
  if (target && target.mtimeMs >= source.mtimeMs) return;
  await copyFile(from, to);
  await chmod(to, 0o600);
}
