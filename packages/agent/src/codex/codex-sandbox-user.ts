/**
 * The user a Codex child runs as on the machine (docs/codex.md, "The child's
 * user"; issue 30, finding 1). A worker running as root gives each
 * conversation's child a uid of its own (util-linux's `setpriv` around the
 * sandbox): not root, so no file of root's is its, the per-user process
 * limit holds, and bubblewrap (and Codex's own sandbox inside it) runs
 * unprivileged in a user namespace, as it does for an ordinary worker. A
 * worker running as an ordinary user cannot change uid: its children keep
 * its uid, kept apart by the namespaces alone.
 */

/** One uid per conversation: `base + id mod 1e9`, so ids past the range share a uid (never root's, never the worker's). */
export const uidRange = 1_000_000_000;

export function conversationUid(base: number, conversationId: number): number {
  return base + (conversationId % uidRange);
}

/** `argv` run as `uid` (and the group of the same number, no supplementary groups). */
export function userArgv(setpriv: string, uid: number, argv: readonly string[]): string[] {
  return [setpriv, `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', ...argv];
}
