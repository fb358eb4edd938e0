import { getPriority } from 'node:os';
import type { ManagedProcess } from '@switchboard/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codexSetup, type CodexSetup } from '../support/codex-system.ts';
import { TestSystem } from '../support/system.ts';

// Issue 30, finding 1: a Codex child, and every command it ran, could use as much memory, as large files and as large
// a /tmp (memory) as the machine had, at the worker's own CPU priority (docs/codex.md, "What a child may use").
// Through a real worker process and the
// fake app-server's `sh:` script, which runs the command for real in the child's sandbox.

describe('a Codex child’s resource limits, through a worker process', () => {
  let system: TestSystem;
  let setup: CodexSetup;

  async function run(chatId: number, command: string): Promise<string> {
    await system.sendTelegram({ chatId, text: `sh: ${command}` });
    return (await system.waitForTelegram(chatId, 1)).at(-1)?.text ?? '';
  }

  beforeAll(async () => {
    setup = codexSetup({ CODEX_AUTO_APPROVE: 'on' });
    system = await TestSystem.start({ workerProcesses: true, workerEnv: setup.workerEnv });
  });
  afterAll(async () => {
    await system?.close();
    setup?.cleanup();
  });

  it('a command cannot take 6 GB of memory, write a 3 GB file nor fill /tmp past 512 MB; the worker answers the next chat', async () => {
    // Sparse file, reserved tmpfs pages and untouched allocations: each costs the machine nothing where it is refused.
    const allocate = `"${process.execPath}" -e "const a=[];try{for(let i=0;i<3;i++)a.push(Buffer.alloc(2e9))}catch{}console.log('allocated='+a.length)"`;
    const reply = await run(7501, `truncate -s 3G big; echo "truncate=$?"; rm -f big; fallocate -l 600M /tmp/big; echo "tmp=$?"; rm -f /tmp/big; ${allocate}`);
    expect(reply).toMatch(/truncate=[1-9]/);
    expect(reply).toMatch(/tmp=[1-9]/);
    expect(reply).toMatch(/allocated=[0-2]\b/);

    const other = await run(7502, 'echo still here');
    expect(other).toContain('still here');
  });

  it('runs a command at a lower CPU priority than the worker, so busy loops in a child take only what the worker leaves', async () => {
    // Field 19 of /proc/<pid>/stat is the niceness; each command reads its own.
    const reply = await run(7503, `cut -d' ' -f19 /proc/self/stat; sh -c "cut -d' ' -f19 /proc/self/stat"`);
    expect(reply.split('\n').slice(1).filter(Boolean)).toEqual(['10', '10']);
    const worker = (system.workers[0] as ManagedProcess).child.pid as number;
    expect(getPriority(worker)).toBe(0);
  });
});
