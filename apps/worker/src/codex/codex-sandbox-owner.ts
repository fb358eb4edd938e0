import { lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A root worker's child runs as its conversation's own uid (docs/codex.md,
 * "The child's user"), so what it must write is made that uid's before each
 * spawn: the workspace and the home (HOME, CODEX_HOME, TMPDIR, and the
 * operator's files the worker just copied in). A tree the worker made
 * before (an upgrade, or CODEX_SANDBOX_USER=worker earlier) is handed over
 * whole, once: its top's owner says whether that is done.
 */
export async function handOverToUid(dirs: { workspace: string; home: string }, uid: number): Promise<void> {
  for (const dir of [dirs.workspace, dirs.home]) {
    if ((await lstat(dir)).uid !== uid) await chownTree(dir, uid);
  }
  // Copied in by the worker at every spawn where newer: root's until handed over.
  for (const path of [join(dirs.home, '.codex'), join(dirs.home, '.codex', 'config.toml'), join(dirs.home, '.codex', 'auth.json'), join(dirs.home, 'tmp')]) {
    await lchown(path, uid, uid).catch(() => undefined);
  }
}

/** The directory and everything under it, links themselves and not what they point to. */
async function chownTree(dir: string, uid: number): Promise<void> {
  await lchown(dir, uid, uid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(path, uid);
    else await lchown(path, uid, uid);
  }
}
