import { isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * Where a Codex conversation works (docs/codex.md, "Workspaces"): the
 * directory `<root>/<conversation id>`. Path arithmetic only; the caller
 * creates the directory, resolves symbolic links (realpath) and asks
 * `isInsideDirectory` again of the real paths, so a link planted in the root
 * cannot send a conversation elsewhere.
 */
export type WorkspacePath = { ok: true; path: string } | { ok: false; reason: 'root_not_absolute' | 'bad_conversation_id' | 'outside_root' };

export function resolveWorkspacePath(root: string, conversationId: number): WorkspacePath {
  if (!isAbsolute(root)) return { ok: false, reason: 'root_not_absolute' };
  if (!Number.isSafeInteger(conversationId) || conversationId <= 0) return { ok: false, reason: 'bad_conversation_id' };
  const path = join(resolve(root), String(conversationId));
  return isInsideDirectory(root, path) ? { ok: true, path } : { ok: false, reason: 'outside_root' };
}

/**
 * Whether `candidate` lies strictly below `root` (the root itself is not
 * inside it), both absolute; `..` segments are resolved first, and a
 * sibling that only shares the root's name as a prefix (`/ws-other` for
 * `/ws`) is outside.
 */
export function isInsideDirectory(root: string, candidate: string): boolean {
  if (!isAbsolute(root) || !isAbsolute(candidate)) return false;
  const rel = relative(resolve(root), resolve(candidate));
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}
