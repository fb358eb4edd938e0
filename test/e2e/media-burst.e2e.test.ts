import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, TestSystem } from '../support/system.ts';

/**
 * Issue 30, finding 3: one user's burst of large text documents must not
 * stall a worker for the others. Before the media budgets and the paced
 * token count, a burst like this held the worker's event loop for seconds:
 * its peer declared it dead, and every other conversation on it was cut off
 * and counted as a restart. Two worker processes, so a stalled one has a peer
 * to declare it dead; the gateway's rate limit is raised so the whole burst
 * reaches the workers (the worst case for them).
 */
const deadAfterMs = 2500;
/** Megabytes of text per file, just under MEDIA_MAX_BYTES (5 MiB). */
const fileChars = Math.floor(4.5 * 1024 * 1024);

async function uploadText(sim: string, name: string, text: string): Promise<string> {
  return ((await postJson(`${sim}/control/media/files`, { name, mime: 'text/plain', text })) as { id: string }).id;
}

describe('a burst of large documents from one user (issue 30, finding 3)', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({
      slack: true,
      workers: 2,
      workerProcesses: true,
      workerEnv: { HEARTBEAT_INTERVAL_MS: '250', WORKER_DEAD_AFTER_MS: String(deadAfterMs), SWEEP_INTERVAL_MS: '500' },
      gatewayEnv: { USER_RATE_LIMIT_PER_MINUTE: '1000' },
    });
  }, 90_000);
  afterAll(async () => {
    await system?.close();
  });

  it('another user keeps getting answers meanwhile; no worker is declared dead, nothing is cut off or counted', async () => {
    const words = 'lorem ipsum dolor sit amet consectetur adipiscing elit ';
    const body = words.repeat(Math.ceil(fileChars / words.length)).slice(0, fileChars);
    const files = await Promise.all(Array.from({ length: 4 }, (_, i) => uploadText(system.simUrl, `big-${i}.txt`, body)));
    const burst = Promise.all(
      Array.from({ length: 6 }, (_, i) => system.sendSlack({ channel: 'D0BURST01', text: `read these ${i}`, files: [files[i % 4] as string, files[(i + 1) % 4] as string] })),
    );

    // The other user, one message at a time while the burst is read: every answer comes, none waits seconds.
    const latencies: number[] = [];
    for (let i = 0; i < 8; i++) {
      const sent = performance.now();
      await system.sendTelegram({ chatId: 7701, text: `ping ${i}` });
      await system.waitForTelegram(7701, i + 1, 30_000);
      latencies.push(performance.now() - sent);
    }
    await burst;
    // Every message of the burst is answered, or refused past the turn's budget: one reply each at least.
    await system.waitForSlack('D0BURST01', 6, 60_000);

    // The burst's own messages interrupt each other (busy mode interrupt); nothing was cut off, and the other user's turns all completed.
    const turns = await system.sql<{ chat_id: string; status: string; error: string | null; cut_off: boolean }[]>`
      select c.chat_id, t.status, t.error, t.cut_off_at is not null as cut_off from turns t join conversations c on c.id = t.conversation_id order by t.id`;
    expect(turns.filter((t) => t.cut_off || t.status === 'running' || (t.chat_id === '7701' && t.status !== 'completed')), JSON.stringify(turns)).toEqual([]);
    expect(turns.filter((t) => t.chat_id === '7701')).toHaveLength(8);
    const counted = await system.sql<{ chat_id: string; restart_count: number }[]>`select chat_id, restart_count from conversations where restart_count > 0`;
    expect(counted).toEqual([]);
    const dead = await system.sql<{ id: string }[]>`select id from workers where status = 'dead'`;
    expect(dead).toEqual([]);
    // Far above a turn's usual ~0.1 s, far below a stall that gets a worker declared dead.
    expect(Math.max(...latencies), `latencies ${latencies.map((l) => l.toFixed(0)).join(', ')} ms`).toBeLessThan(deadAfterMs);
  }, 180_000);
});
