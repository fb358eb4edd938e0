import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { ManagedProcess } from '@switchboard/harness';
import { conversationLeaseKey } from '@switchboard/queue';
import { readJson } from '../http-json.ts';
import type { ChaosTarget } from './chaos-target.ts';
import type { ScheduledFault } from './fault-schedule.ts';

/**
 * Worker kills aimed at the two moments a crash hurts most (issue 19): while
 * a reply is on its way to the platform, and while a conversation is being
 * compressed. The moment is made long on purpose (the platform or the
 * summariser is held for a few seconds), the worker caught in it is found
 * through what it holds, and that worker is killed.
 */

/** The pid in a worker id (`<hostname>-<pid>-<random>`, docs/restarts.md "Liveness"). */
export const pidOf = (workerId: string) => Number(workerId.split('-').at(-2));

const holdMs = 3_000;
const aimTimeoutMs = 8_000;
const summaryMarker = 'Transcript to summarise:';

/** The platform holds its send call; the worker that claimed the outbox row being sent is killed with the call in flight. */
export async function killWorkerDuringDelivery({ system, sql }: ChaosTarget, fault: ScheduledFault): Promise<string> {
  const platform = fault.target;
  const faults = `${system.simUrl}/control/${platform}/faults`;
  const send = platform === 'discord' ? { route: 'messages' } : { method: platform === 'slack' ? 'chat.postMessage' : 'sendMessage' };
  await readJson(faults, { method: 'POST', body: { ...send, kind: 'delay', times: 5, delayMs: holdMs } });
  let workerId: string | undefined;
  try {
    // A claim is taken just before the send call; one that is a moment old is (almost surely) in the held call.
    workerId = await pollFor(async () => {
      // claimed_by is `<worker id>#<lease owner>` (outboxClaimId).
      const [row] = await sql<{ worker_id: string }[]>`
        select split_part(claimed_by, '#', 1) as worker_id from outbox
        where status = 'pending' and platform = ${platform} and claimed_by is not null and claimed_until > now()
        order by id limit 1`;
      return row?.worker_id;
    });
  } finally {
    await readJson(faults, { method: 'DELETE' });
  }
  return killAimed(system, workerId, fault, `a ${platform} reply in flight`);
}

/**
 * The summariser is held; the worker compressing the conversation is killed
 * mid-compression. Compression runs before the turn begins, so the worker is
 * found through the conversation's lease, whose owner token starts with the
 * holder's worker id (docs/restarts.md).
 */
export async function killWorkerDuringCompression({ system, sql, redis }: ChaosTarget, fault: ScheduledFault): Promise<string> {
  const url = `${system.simUrl}/control/model/script`;
  const { remainingTimes: _remaining, ...script } = await readJson<{ remainingTimes?: unknown; rules?: unknown[] }>(url);
  const held = { match: summaryMarker, reply: 'Summary: the earlier small talk.', delayMs: holdMs, times: 1_000 };
  await readJson(url, { method: 'POST', body: { ...script, rules: [held, ...(script.rules ?? [])] } });
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1, lazyConnect: true });
  client.on('error', () => undefined);
  let workerId: string | undefined;
  try {
    workerId = await pollFor(async () => {
      const pending = await readJson<{ body: { messages?: { content?: unknown }[] } }[]>(`${system.simUrl}/control/model/requests?state=pending`);
      const tags = pending.flatMap((request) => tagsInSummaryRequest(request.body.messages ?? []));
      if (tags.length === 0) return undefined;
      // The transcript names its conversation by the tag every human line starts with.
      const conversations = await sql<{ conversation_id: string }[]>`
        select distinct s.conversation_id from sessions s join messages m on m.session_id = s.id
        where m.role = 'user' and m.content like any(${sql.array(tags.map((tag) => `[c${tag}.%`))})`;
      for (const { conversation_id } of conversations) {
        const owner = await client.get(conversationLeaseKey(system.redisPrefix, Number(conversation_id)));
        if (owner) return owner.split('/')[0];
      }
      return undefined;
    });
  } finally {
    client.disconnect();
    await readJson(url, { method: 'POST', body: script });
  }
  return killAimed(system, workerId, fault, 'a compression in flight');
}

/** Conversation indexes named by the tagged lines of a summariser request's transcript. */
export function tagsInSummaryRequest(messages: { content?: unknown }[]): number[] {
  const last = messages.at(-1)?.content;
  if (typeof last !== 'string' || !last.startsWith(summaryMarker)) return [];
  // The transcript quotes the tagged lines inside it, so the tag is searched for, not read from the start.
  const tag = /\[c(\d+)\.\d+\]/.exec(last);
  return tag ? [Number(tag[1])] : [];
}

async function pollFor<T>(read: () => Promise<T | undefined>): Promise<T | undefined> {
  const deadline = Date.now() + aimTimeoutMs;
  while (Date.now() < deadline) {
    const found = await read().catch(() => undefined);
    if (found !== undefined) return found;
    await sleep(100);
  }
  return undefined;
}

/** Kills the aimed worker (the scheduled one when the aim found none: the kill still happens, its detail says so). */
async function killAimed(system: ChaosTarget['system'], workerId: string | undefined, fault: ScheduledFault, moment: string): Promise<string> {
  const aimed = workerId === undefined ? undefined : system.workers.find((w) => w.child.pid === pidOf(workerId));
  // The fallback is seeded like the rest of the schedule: the scheduled worker, or (delivery kills name a platform) one picked by the duration.
  const scheduled = fault.target.startsWith('worker-') ? fault.target : `worker-${fault.durationMs % system.workers.length}`;
  const victim = aimed ?? system.workers.find((w) => w.name === scheduled) ?? (system.workers[0] as ManagedProcess);
  await victim.stop('SIGKILL');
  await sleep(fault.durationMs);
  await system.startAgain(victim);
  return `${victim.name} SIGKILL ${aimed ? `with ${moment}` : `(no ${moment.replace(/^a /, '')} within ${aimTimeoutMs / 1000} s: not aimed)`}, restarted after ${fault.durationMs} ms`;
}
