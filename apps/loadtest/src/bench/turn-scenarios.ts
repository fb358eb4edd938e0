import { createLatencyRecorder, type LatencySummary } from '../latency-histogram.ts';
import { getJson, postJson, type SystemUnderTest } from './system-under-test.ts';

interface SentMessage {
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

/**
 * Sequential turns in one conversation with an instant model: end-to-end
 * time (the platform posts the webhook → the platform receives the reply,
 * both on the simulator's clock) minus the model's own time is what
 * Switchboard adds per turn — ingress, scheduling, storage, delivery, and
 * its HTTP hops to the platform and the model. The load generator's own hop
 * to the simulator is not in it.
 */
export async function measureTurnOverhead(
  sut: Pick<SystemUnderTest, 'simUrl'>,
  turns: number,
  options: { warmup?: number; chatId?: number } = {},
): Promise<{ overhead: LatencySummary; endToEnd: LatencySummary }> {
  const warmup = options.warmup ?? 20;
  const chatId = options.chatId ?? 900_001;
  await postJson(`${sut.simUrl}/control/model/script`, {});
  await fetch(`${sut.simUrl}/control/model/requests`, { method: 'DELETE' });
  const sendTimes: number[] = [];
  const replies: SentMessage[] = [];
  for (let i = 0; i < warmup + turns; i++) {
    sendTimes.push(await sendUpdate(sut, chatId, `overhead turn ${chatId}.${i}`));
    const sent = await getJson<SentMessage[]>(`${sut.simUrl}/control/telegram/wait?chat_id=${chatId}&count=${i + 1}&timeout_ms=30000`);
    replies.push(sent[i] as SentMessage);
  }
  const requests = await getJson<ModelRequest[]>(`${sut.simUrl}/control/model/requests`);
  const modelMs = new Map(requests.map((r) => [lastUserText(r), (r.finishedAt ?? r.receivedAt) - r.receivedAt]));
  const overhead = createLatencyRecorder();
  const endToEnd = createLatencyRecorder();
  for (let i = warmup; i < warmup + turns; i++) {
    const total = (replies[i] as SentMessage).sentAt - (sendTimes[i] as number);
    endToEnd.record(total);
    overhead.record(total - (modelMs.get(`overhead turn ${chatId}.${i}`) ?? 0));
  }
  return { overhead: overhead.summary(), endToEnd: endToEnd.summary() };
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
