import { Redis } from 'ioredis';
import postgres from 'postgres';
import { jobIdForInboundEvent, QueueName } from '@switchboard/queue';
import { createLatencyRecorder, type LatencySummary } from '../latency-histogram.ts';
import { getJson, postJson, type SystemUnderTest } from './system-under-test.ts';

interface SentMessage {
  message_id: number;
  text: string;
  sentAt: number;
}
interface ModelRequest {
  body: { messages: { role: string; content: unknown }[] };
  receivedAt: number;
  finishedAt?: number;
  abortedAt?: number;
}

const lastUserText = (request: ModelRequest) => {
  const users = request.body.messages.filter((m) => m.role === 'user');
  return String(users.at(-1)?.content ?? '');
};

/** Returns when the simulated Telegram started posting the webhook (its clock, as the replies' sentAt). */
async function sendUpdate(sut: Pick<SystemUnderTest, 'simUrl'>, chatId: number, text: string): Promise<number> {
  const answer = await postJson<{ status: number; postedAt: number }>(`${sut.simUrl}/control/telegram/updates`, { chat: { id: chatId, type: 'private' }, from: { id: chatId }, text });
  if (answer.status !== 200) throw new Error(`gateway answered ${answer.status} to a bench message`);
  return answer.postedAt;
}

/** Where a sequential turn's overhead goes, each on the clocks of the machine's processes (one box, one wall clock). */
export interface TurnPhases {
  /** The platform posts the webhook → the gateway has the event stored (the insert committed and answered). */
  ingress: LatencySummary;
  /**
   * Issue 3's "scheduling overhead": the event is stored → the turn's model
   * request reaches the model. Hand-off to a worker (BullMQ), the
   * conversation's lease, the state read, the request built and sent. It
   * starts where interrupt latency starts: the gateway's `storedAt`, which
   * the wake-up job carries.
   */
  schedule: LatencySummary;
  /**
   * The same, from the insert's `received_at` (Postgres' clock, the
   * statement's start): it also holds the store's own execution, its commit
   * (fsync) and the answer's way back to the gateway. Kept beside the
   * figure because the bench cut there until 2026-11-23.
   */
  scheduleFromStatement: LatencySummary;
  /** The model's answer is complete → the reply reaches the platform: commit (fsync) and `sendMessage`. */
  finish: LatencySummary;
}

/**
 * Sequential turns in one conversation with an instant model: end-to-end
 * time (the platform posts the webhook → the platform receives the reply,
 * both on the simulator's clock) minus the model's own time is what
 * Switchboard adds per turn — ingress, scheduling, storage, delivery, and
 * its HTTP hops to the platform and the model. The load generator's own hop
 * to the simulator is not in it. With the database and Redis it is also split into
 * phases at the gateway's `storedAt` (from the wake-up jobs in Redis) and
 * the model request's times.
 */
export async function measureTurnOverhead(
  sut: Pick<SystemUnderTest, 'simUrl'> & Partial<Pick<SystemUnderTest, 'databaseUrl' | 'redisUrl' | 'redisPrefix'>>,
  turns: number,
  options: { warmup?: number; chatId?: number; turnsPerChat?: number } = {},
): Promise<{ overhead: LatencySummary; endToEnd: LatencySummary; phases?: TurnPhases }> {
  const warmup = options.warmup ?? 20;
  const chatId = options.chatId ?? 900_001;
  // Every turn in one chat by default; with turnsPerChat, a fresh chat every so many turns.
  const chatOf = (i: number) => (options.turnsPerChat ? chatId + 1 + Math.floor(i / options.turnsPerChat) : chatId);
  const textOf = (i: number) => `overhead turn ${chatId}.${i}`;
  await postJson(`${sut.simUrl}/control/model/script`, {});
  await fetch(`${sut.simUrl}/control/model/requests`, { method: 'DELETE' });
  const sendTimes: number[] = [];
  const replies: SentMessage[] = [];
  for (let i = 0; i < warmup + turns; i++) {
    // The wait is asked for before the message is sent: a request from the
    // load generator in the middle of the turn would compete for the same
    // two cores as the turn it measures.
    // Only the new reply (after the last one seen): the whole chat's list would cost the simulator more every turn.
    const chat = chatOf(i);
    const after = i > 0 && chatOf(i - 1) === chat ? (replies.at(-1)?.message_id ?? 0) : 0;
    const reply = getJson<SentMessage[]>(`${sut.simUrl}/control/telegram/wait?chat_id=${chat}&after_message_id=${after}&count=1&timeout_ms=30000`);
    sendTimes.push(await sendUpdate(sut, chat, textOf(i)));
    const [sent] = await reply;
    if (!sent) throw new Error(`no reply to ${textOf(i)}`);
    replies.push(sent);
  }
  const requests = new Map((await getJson<ModelRequest[]>(`${sut.simUrl}/control/model/requests`)).map((r) => [lastUserText(r), r]));
  const { databaseUrl, redisUrl, redisPrefix } = sut;
  const storedTimes = databaseUrl && redisUrl && redisPrefix ? await readStoredTimes(databaseUrl, { redisUrl, redisPrefix }, `overhead turn ${chatId}.%`) : undefined;
  const overhead = createLatencyRecorder();
  const endToEnd = createLatencyRecorder();
  const [ingress, schedule, fromStatement, finish] = [createLatencyRecorder(), createLatencyRecorder(), createLatencyRecorder(), createLatencyRecorder()];
  for (let i = warmup; i < warmup + turns; i++) {
    const request = requests.get(textOf(i));
    const sentAt = (replies[i] as SentMessage).sentAt;
    const total = sentAt - (sendTimes[i] as number);
    endToEnd.record(total);
    overhead.record(total - (request ? (request.finishedAt ?? request.receivedAt) - request.receivedAt : 0));
    const stored = storedTimes?.get(textOf(i));
    if (stored === undefined || request?.finishedAt === undefined) continue;
    ingress.record(stored.storedAt - (sendTimes[i] as number));
    schedule.record(request.receivedAt - stored.storedAt);
    fromStatement.record(request.receivedAt - stored.receivedAt);
    finish.record(sentAt - request.finishedAt);
  }
  if (storedTimes && schedule.summary().count < turns) throw new Error(`only ${schedule.summary().count} of ${turns} turns could be split into phases`);
  const phases = storedTimes ? { ingress: ingress.summary(), schedule: schedule.summary(), scheduleFromStatement: fromStatement.summary(), finish: finish.summary() } : undefined;
  return { overhead: overhead.summary(), endToEnd: endToEnd.summary(), ...(phases ? { phases } : {}) };
}

/**
 * When each matching message was stored, ms since the epoch with
 * microseconds: `receivedAt` is the insert's start (Postgres' clock),
 * `storedAt` the moment the gateway had it committed, which its wake-up job
 * carries (the job stays in Redis after it completes, the newest 1,000 of them).
 */
async function readStoredTimes(
  databaseUrl: string,
  redis: { redisUrl: string; redisPrefix: string },
  pattern: string,
): Promise<Map<string, { receivedAt: number; storedAt: number }>> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  const client = new Redis(redis.redisUrl, { lazyConnect: true });
  try {
    const rows = await sql<{ id: string; text: string; received_ms: string }[]>`
      select id::text, text, (extract(epoch from received_at) * 1000)::text as received_ms from inbound_events where text like ${pattern}`;
    await client.connect();
    const pipeline = client.pipeline();
    for (const r of rows) pipeline.hget(`${redis.redisPrefix}:bull:${QueueName.Turns}:${jobIdForInboundEvent(Number(r.id))}`, 'data');
    const answers = (await pipeline.exec()) ?? [];
    const times = new Map<string, { receivedAt: number; storedAt: number }>();
    rows.forEach((r, i) => {
      const data = answers[i]?.[1];
      const storedAt = typeof data === 'string' ? (JSON.parse(data) as { storedAt?: unknown }).storedAt : undefined;
      if (typeof storedAt === 'number') times.set(r.text, { receivedAt: Number(r.received_ms), storedAt });
    });
    return times;
  } finally {
    client.disconnect();
    await sql.end({ timeout: 5 });
  }
}

/**
 * A message arriving while the model streams a long answer (busy mode
 * interrupt): time from sending the new message to the simulator seeing the
 * stream's connection closed. It includes the webhook hop, so it is an upper
 * bound of "stored → aborted".
 */
export async function measureInterruptLatency(sut: Pick<SystemUnderTest, 'simUrl'>, samples: number): Promise<LatencySummary> {
  await postJson(`${sut.simUrl}/control/model/script`, {
    rules: [{ match: 'tell me a long story', replyRepeat: { text: 'once upon a time ', count: 4000 }, chunkDelayMs: 5 }],
    chunkSize: 16,
  });
  await fetch(`${sut.simUrl}/control/model/requests`, { method: 'DELETE' });
  const latency = createLatencyRecorder();
  for (let i = 0; i < samples; i++) {
    const chatId = 910_000 + i;
    await sendUpdate(sut, chatId, `tell me a long story ${i}`);
    await getJson(`${sut.simUrl}/control/model/wait?count=${2 * i + 1}&state=any&timeout_ms=30000`);
    const t0 = Date.now();
    await sendUpdate(sut, chatId, `never mind ${i}`);
    await getJson(`${sut.simUrl}/control/model/wait?count=${i + 1}&state=aborted&timeout_ms=30000`);
    await getJson(`${sut.simUrl}/control/telegram/wait?chat_id=${chatId}&count=1&timeout_ms=30000`);
    const requests = await getJson<ModelRequest[]>(`${sut.simUrl}/control/model/requests`);
    const story = requests.find((r) => lastUserText(r) === `tell me a long story ${i}`);
    if (!story?.abortedAt) throw new Error(`story ${i} was not aborted`);
    latency.record(story.abortedAt - t0);
  }
  return latency.summary();
}
