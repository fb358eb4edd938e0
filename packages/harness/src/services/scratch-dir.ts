import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ownerFile = 'owner.pid';

/**
 * A throwaway directory under the OS temp dir, tagged with this process's pid.
 * A run that is killed (Ctrl-C, OOM) cannot clean up after itself, so each new
 * directory first removes older ones whose owner and server are both gone;
 * otherwise every aborted run would leave ~40 MB of Postgres cluster in /tmp.
 */
export function createScratchDir(prefix: string, serverPidFile?: string): string {
  removeAbandonedDirs(prefix, serverPidFile);
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, ownerFile), `${process.pid}\n`);
  return dir;
}

function removeAbandonedDirs(prefix: string, serverPidFile: string | undefined): void {
  let entries: string[];
  try {
    entries = readdirSync(tmpdir()).filter((name) => name.startsWith(prefix));
  } catch {
    return;
  }
  for (const name of entries) {
    const dir = join(tmpdir(), name);
    const owner = readPid(join(dir, ownerFile));
    // No owner file: either not ours or still being created by another run.
    if (owner === undefined || isAlive(owner)) continue;
    // A server that outlived its owner is left alone: its pid may since have
    // been reused, and the harness only ever signals processes it spawned.
    const server = serverPidFile === undefined ? undefined : readPid(join(dir, serverPidFile));
    if (server !== undefined && isAlive(server)) continue;
    rmSync(dir, { recursive: true, force: true });
  }
}

function readPid(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8').split('\n')[0] ?? '', 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
