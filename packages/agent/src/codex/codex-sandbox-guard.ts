/**
 * The guard between the worker and a Codex child's bubblewrap (docs/codex.md,
 * "When the worker is killed"). `--die-with-parent` alone left sandboxes
 * behind a SIGKILLed worker: bwrap arms its parent-death signal only after it
 * started (the outer bwrap at once, the sandbox's init only once its setup is
 * done), so a worker killed in those milliseconds leaves an outer bwrap or a
 * sandbox init (and its command) with no parent-death signal, reparented to
 * the host's init; a sandbox init whose outer bwrap died before releasing it
 * waits for it for ever. On a loaded machine that window is wide: a worker
 * SIGKILLed within 4 ms of spawning a child left its sandbox running in most
 * of 80 tries (bwrap 0.8.0).
 *
 * The guard is a /bin/sh script that runs bwrap in the background with the
 * worker's stdio and reads fd 3, a socket whose other end only the worker
 * holds: when the worker dies, however, the read ends, and the guard stops
 * and SIGKILLs bwrap and everything under it (by pid; SIGKILL from outside a
 * pid namespace ends its init, and the kernel then ends the whole
 * namespace). Nothing there depends on a signal bwrap had time to arm. The
 * guard itself dies with bwrap's exit (it exits with bwrap's status) and on
 * the worker's SIGTERM (it ends the sandbox first).
 */

/** Runs as `sh -c guardScript codex-sandbox-guard <bwrap argv…>`; fd 3 is the worker's lifeline. */
export const guardScript = [
  // Stop first so a process cannot fork or clone past us, then its children (a bwrap's sandbox init), then it. A stop
  // takes effect a moment after `kill` returns: its children are read once it shows stopped (T) or gone.
  'stopped() { n=0; while read -r _ _ s _ < /proc/"$1"/stat && [ "$s" != T ] && [ "$s" != t ] && [ "$s" != Z ] && [ $n -lt 10000 ]; do n=$((n + 1)); done 2>/dev/null; }',
  'end_tree() { kill -STOP "$1" 2>/dev/null; stopped "$1"; for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do end_tree "$c"; done; kill -KILL "$1" 2>/dev/null; }',
  // Stdin through another descriptor: a background job of a non-interactive shell reads /dev/null, and dash does so
  // even for an explicit `0<&0`.
  'exec 4<&0',
  '"$@" 0<&4 4<&- 3<&- &',
  'exec 4<&-',
  'sandbox=$!',
  // Only while the sandbox is still this guard's child: after the guard's own death its pid may be another's.
  '{ read -r _ <&3; [ "$(cut -d" " -f4 /proc/"$sandbox"/stat 2>/dev/null)" = "$$" ] && end_tree "$sandbox"; } &',
  'watcher=$!',
  'exec 3<&-',
  'trap \'end_tree "$sandbox"\' TERM INT HUP',
  'wait "$sandbox"; status=$?',
  // A trap interrupts `wait`: wait again for the sandbox's real end.
  'while kill -0 "$sandbox" 2>/dev/null; do wait "$sandbox"; status=$?; done',
  'kill "$watcher" 2>/dev/null',
  'exit "$status"',
].join('\n');

/** The command line that runs `bwrapArgv` under the guard. */
export function guardSandboxArgv(bwrapArgv: readonly string[]): string[] {
  return ['/bin/sh', '-c', guardScript, 'codex-sandbox-guard', ...bwrapArgv];
}
