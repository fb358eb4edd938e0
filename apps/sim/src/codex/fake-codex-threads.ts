import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The fake's threads on disk, one small file per thread in the state dir, so a
 * thread started by one fake process is recognised by the next (a worker
 * restart resumes it) and two fakes writing at once never lose each other's threads.
 */
export interface FakeThreadStore {
  create(cwd: string | undefined): string;
  exists(threadId: string): boolean;
  /** Counts a finished turn; returns the thread's turn count. */
  countTurn(threadId: string): number;
  /** Makes the thread's next `thread/resume`, in whichever fake process, wait `ms` before its answer (the `delay-resume` script). */
  delayNextResume(threadId: string, ms: number): void;
  /** The delay set for this resume, once: later resumes answer at once. */
  takeResumeDelay(threadId: string): number;
}

interface ThreadRecord {
  cwd: string | null;
  turns: number;
  resumeDelayMs?: number;
}

export function createFakeThreadStore(dir: string): FakeThreadStore {
  mkdirSync(dir, { recursive: true });
  // Only ids we made ourselves name a file: an id from the wire never becomes a path outside the dir.
  const fileOf = (threadId: string) => (/^thr_[0-9a-f-]{36}$/.test(threadId) ? join(dir, `${threadId}.json`) : undefined);
  const read = (threadId: string): ThreadRecord | undefined => {
    const file = fileOf(threadId);
    if (!file) return undefined;
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as ThreadRecord;
    } catch {
      return undefined;
    }
  };
  const write = (threadId: string, record: ThreadRecord) => writeFileSync(fileOf(threadId) as string, JSON.stringify(record));
  return {
    create(cwd) {
      const threadId = `thr_${randomUUID()}`;
      write(threadId, { cwd: cwd ?? null, turns: 0 });
      return threadId;
    },
    exists: (threadId) => read(threadId) !== undefined,
    countTurn(threadId) {
      const record = read(threadId) ?? { cwd: null, turns: 0 };
      record.turns += 1;
      write(threadId, record);
      return record.turns;
    },
    delayNextResume(threadId, ms) {
      const record = read(threadId);
      if (record) write(threadId, { ...record, resumeDelayMs: ms });
    },
    takeResumeDelay(threadId) {
      const record = read(threadId);
      if (!record?.resumeDelayMs) return 0;
      write(threadId, { cwd: record.cwd, turns: record.turns });
      return record.resumeDelayMs;
    },
  };
}
