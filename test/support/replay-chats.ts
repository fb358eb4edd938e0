import { expect } from 'vitest';
import type { TestSystem } from './system.ts';

/**
 * A short replay for the scale-out tests (Redis Cluster, Sentinel,
 * PgBouncer): several chats at once, each sending its lines one after the
 * other as a person would (the next once the last was answered). A delivery
 * the gateway does not acknowledge (503 while Redis fails over) is delivered
 * again, as Telegram does; an acknowledged one is never sent twice.
 */
export interface ReplayPlan {
  chats: number[];
  linesPerChat: number;
  /** Called once, after `afterLine` lines of the first chat were answered: the fault to survive. */
  midway?: { afterLine: number; act: () => Promise<void> };
  replyTimeoutMs?: number;
}

export interface ReplayResult {
  /** Deliveries the gateway did not acknowledge and that were sent again. */
  redelivered: number;
}

export const replayLine = (chatId: number, line: number) => `line ${line} of ${chatId}`;

export async function replayChats(system: TestSystem, plan: ReplayPlan): Promise<ReplayResult> {
  let redelivered = 0;
  let midway: Promise<void> | undefined;
  await Promise.all(
    plan.chats.map(async (chatId, index) => {
      for (let line = 1; line <= plan.linesPerChat; line++) {
        redelivered += await deliverUntilAcknowledged(system, chatId, replayLine(chatId, line));
        await system.waitForTelegram(chatId, line, plan.replyTimeoutMs ?? 45_000);
        if (index === 0 && line === plan.midway?.afterLine) midway = plan.midway.act();
      }
    }),
  );
  await midway;
  return { redelivered };
}

/** 0 lost, 0 duplicated, 0 reordered: each chat got exactly its echoes, in order, and Postgres completed one turn per line. */
export async function expectReplayKept(system: TestSystem, plan: ReplayPlan): Promise<void> {
  for (const chatId of plan.chats) {
    const sent = await system.waitForTelegram(chatId, plan.linesPerChat);
    expect(sent.map((m) => m.text)).toEqual(Array.from({ length: plan.linesPerChat }, (_, i) => `echo: ${replayLine(chatId, i + 1)}`));
  }
  const chatIds = plan.chats.map(String);
  const [row] = await system.sql<{ n: number }[]>`
    select count(*)::int as n from turns t join conversations c on c.id = t.conversation_id
    where t.status = 'completed' and c.chat_id = any(${chatIds})`;
  expect(row?.n).toBe(plan.chats.length * plan.linesPerChat);
}

async function deliverUntilAcknowledged(system: TestSystem, chatId: number, text: string): Promise<number> {
  const first = await system.sendTelegram({ chatId, text });
  let retries = 0;
  let status = first.status;
  while (status !== 200) {
    retries += 1;
    if (retries > 60) throw new Error(`the gateway did not acknowledge "${text}" after ${retries} deliveries (last ${status})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
    status = (await system.sendTelegram({ chatId, text, updateId: first.updateId })).status;
  }
  return retries;
}
