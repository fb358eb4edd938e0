import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findToolTail, parseChatCommand } from '@switchboard/core';
import { TestSystem } from '../support/system.ts';
import {
  armTelegramFault,
  cancelledResultPrefix,
  chatPrefix,
  lastUserText,
  loadChat,
  modelRequests,
  overflowNoticePrefix,
  recoveryNoteIndexes,
  recoveryNotePrefix,
  requestsOfChat,
  sendText,
  sentTo,
  transcript,
  userTexts,
  waitForCondition,
  waitForIdle,
  waitForModelRequest,
  waitForRequestFor,
  type ChatSnapshot,
  type ModelRequest,
} from '../support/turn-helpers.ts';
import { acceptedInput, checkAll, expectedEchoReplies } from '../support/turn-invariants.ts';

/**
 * Busy input modes end to end (docs/turns.md): a message that arrives while a
 * turn runs, during model streaming and during a running tool, under each
 * mode, on two worker processes. Each case checks what the user saw, what
 * the model was asked, and what Postgres stored. Mid-turn input is sent only
 * after the sim has seen the model request start (or the tool call stream
 * finish), never after a sleep. The single-arrival cases are one table
 * (`cases`: mode, busy point, what arrives, what the user must see, then the
 * case's own checks) played by one runner (`runCase`); the bursts share `burst`.
 */

// ~6.8k characters at 16 per chunk and 15 ms per chunk: ~6 s, so it only ever ends by being aborted.
const longStory = { replyRepeat: { text: 'once upon a time ', count: 400 }, chunkDelayMs: 15 };
// ~1.8k characters: ~1.7 s of streaming, long enough to send input into, short enough to wait for.
const shortStoryText = 'lorem ipsum '.repeat(150);
const shortStory = { replyRepeat: { text: 'lorem ipsum ', count: 150 }, chunkDelayMs: 15 };
// Tools that must finish run this long: time enough to send input while they run.
const shortWaitSeconds = 2;
// COLLECT_DEBOUNCE_MS for this file: above the default so a burst sent while idle stays one burst on a loaded machine.
const collectDebounceMs = 1000;
const waitTool = (seconds: number) => ({ name: 'wait', arguments: { seconds } });

const busyReplies = {
  interrupt: 'Busy mode is now interrupt: a new message stops my current answer and I answer the new one.',
  queue: 'Busy mode is now queue: new messages wait and each gets its own answer, in order.',
  collect: 'Busy mode is now collect: messages sent while I work are answered together afterwards.',
  steer: 'Busy mode is now steer: new messages are added to the answer I am working on.',
} as const;

const chats = {
  interruptStream: 2101,
  interruptTool: 2102,
  interruptPendingTogether: 2103,
  stopStream: 2104,
  stopToolQueue: 2105,
  queueStream: 2201,
  queueTool: 2202,
  collectStream: 2301,
  collectTool: 2302,
  collectIdleBurst: 2303,
  steerTool: 2401,
  steerStream: 2402,
  switching: 2501,
  burstInterrupt: 2601,
  burstQueue: 2602,
  burstCollect: 2603,
  burstSteer: 2604,
};

const text = (chatId: number, words: string) => `${chatPrefix(chatId)} ${words}`;
const rule = (chatId: number, words: string) => `^${chatPrefix(chatId)} ${words}$`;

// One script for the whole file: every rule names its chat, so cases never depend on each other's rules.
const script = {
  rules: [
    { matchRegex: rule(chats.interruptTool, 'check the time, then wait'), toolCalls: [{ name: 'current_time', arguments: {} }, waitTool(20), { name: 'calculator', arguments: { expression: '6 * 7' } }], times: 1 },
    { matchRegex: rule(chats.stopToolQueue, 'wait a long time'), toolCalls: [waitTool(20)], times: 1 },
    { matchRegex: rule(chats.queueTool, 'wait a moment'), toolCalls: [waitTool(shortWaitSeconds)], times: 1 },
    { matchRegex: rule(chats.collectTool, 'wait a moment'), toolCalls: [waitTool(shortWaitSeconds)], times: 1 },
    { matchRegex: rule(chats.steerTool, 'wait a moment'), toolCalls: [waitTool(shortWaitSeconds)], times: 1 },
    // Bursts: the first message of some starts a tool, the rest answer with a small delay.
    { matchRegex: rule(chats.burstInterrupt, 'burst 00'), toolCalls: [waitTool(1)], times: 1 },
    // Steer: short enough that the input arriving during the wait stays under the cap.
    { matchRegex: rule(chats.burstSteer, 'burst 00'), toolCalls: [waitTool(0.8)], times: 1 },
    // Queue: the first request hangs until /stop, so the cap is reached while it runs however long the burst takes.
    { matchRegex: rule(chats.burstQueue, 'burst 00'), hang: true },
    { matchRegex: `^${chatPrefix(chats.burstQueue)} burst`, delayMs: 30 },
    { matchRegex: `^c260[134]: burst`, delayMs: 60 },
    { match: 'long story', ...longStory },
    { match: 'short story', ...shortStory },
  ],
};

type BusyMode = keyof typeof busyReplies;

/** When the messages after the first arrive. */
type BusyPoint =
  /** The first message's model request is streaming. */
  | 'streaming'
  /** The model has streamed its tool calls: a tool runs. */
  | 'tool'
  /** The first turn has committed; its reply's delivery is held for 3 s. */
  | 'delivering'
  /** At once: no turn has started yet. */
  | 'idle';

interface Arrival {
  /** Sent in order while busy (or after the previous arrival was answered); each is accepted. */
  send: string[];
  /** Everything the user has been sent once this arrival is answered (after the /busy reply). */
  sees: string[];
  /** The last of `sees` arrives within this long of this arrival's first message. */
  withinMs?: number;
}

interface CaseRun {
  /** The case's messages, `words` in the chat's prefix; the first starts the turn. */
  m: string[];
  /** The first message's model request, when the case waits for it (streaming, tool). */
  firstRequest: ModelRequest | undefined;
  /** When the first arrival's first message was sent. */
  sentAt: number;
  snapshot: ChatSnapshot;
  requests: ModelRequest[];
  seen: string[];
}

interface BusyCase {
  group: string;
  name: string;
  chat: number;
  /** Set with /busy before the first message; absent: the default, interrupt. */
  mode?: BusyMode;
  words: string[];
  busy: BusyPoint;
  arrivals: (m: string[]) => Arrival[];
  /** What the model was asked and what Postgres stored, once the conversation is idle. */
  check: (run: CaseRun) => void | Promise<void>;
}

describe('busy input modes across two worker processes', () => {
  let system: TestSystem;

  beforeAll(async () => {
    // The per-user rate limit (30 a minute) would refuse the 50-message bursts before the queued-input cap does.
    system = await TestSystem.start({
      workers: 2,
      workerProcesses: true,
      gatewayEnv: { USER_RATE_LIMIT_PER_MINUTE: '0' },
      workerEnv: { COLLECT_DEBOUNCE_MS: String(collectDebounceMs) },
    });
    await system.setModelScript(script);
  }, 90_000);
  afterAll(async () => {
    await system?.close();
  });

  async function send(chatId: number, message: string): Promise<void> {
    const { status, outcome } = await sendText(system, chatId, message);
    expect(status).toBe(200);
    expect(outcome).toBe('accepted');
  }

  /** Waits for the user to have `count` replies in all; returns their texts (trimmed). */
  async function replies(chatId: number, count: number): Promise<string[]> {
    return (await system.waitForTelegram(chatId, count)).map((m) => m.text.trim());
  }

  async function settle(chatId: number): Promise<{ snapshot: ChatSnapshot; requests: ModelRequest[]; seen: string[] }> {
    await waitForIdle(system, [chatId]);
    const [snapshot, all, sent] = await Promise.all([loadChat(system, chatId), modelRequests(system), sentTo(system, chatId)]);
    const requests = requestsOfChat(all, chatId);
    // The invariants of the randomized scenarios hold in every case here too.
    expect(checkAll(snapshot, requests, sent)).toEqual([]);
    return { snapshot, requests, seen: sent.map((m) => m.text.trim()) };
  }

  const eventOf = (snapshot: ChatSnapshot, message: string) => {
    const event = snapshot.events.find((e) => e.text === message);
    if (!event) throw new Error(`no inbound event ${message}`);
    return event;
  };
  const roles = (request: ModelRequest | undefined) => request?.body.messages.map((m) => m.role);

  /** The one runner: /busy, the first message, the busy point, each arrival and what the user saw by its end, then the case's checks. */
  async function runCase(c: BusyCase): Promise<void> {
    const m = c.words.map((words) => text(c.chat, words));
    const busyReply = c.mode ? [busyReplies[c.mode]] : [];
    if (c.mode) {
      await send(c.chat, `/busy ${c.mode}`);
      expect(await replies(c.chat, 1)).toEqual(busyReply);
    }
    // Holding the first reply's delivery keeps the conversation busy without a turn to interrupt.
    if (c.busy === 'delivering') await armTelegramFault(system, { method: 'sendMessage', kind: 'delay', delayMs: 3000, times: 1 });
    await send(c.chat, m[0]!);
    let firstRequest: ModelRequest | undefined;
    if (c.busy === 'streaming') firstRequest = await waitForRequestFor(system, m[0]!);
    // The tool calls have been streamed: the tool runs.
    if (c.busy === 'tool') firstRequest = await waitForRequestFor(system, m[0]!, 'finished');
    if (c.busy === 'delivering') await waitForCondition('the first turn to commit', async () => (await loadChat(system, c.chat)).turns.some((t) => t.status === 'completed'));
    let sentAt = 0;
    for (const arrival of c.arrivals(m)) {
      const arrivedAt = Date.now();
      sentAt ||= arrivedAt;
      for (const message of arrival.send) await send(c.chat, message);
      expect(await replies(c.chat, busyReply.length + arrival.sees.length)).toEqual([...busyReply, ...arrival.sees]);
      if (arrival.withinMs !== undefined) expect(Date.now() - arrivedAt).toBeLessThan(arrival.withinMs);
    }
    await c.check({ ...(await settle(c.chat)), m, firstRequest, sentAt });
  }

  // What arrives while a turn is busy, under each mode, and what the user must see; `check` reads the model's requests and Postgres.
  const cases: BusyCase[] = [
    {
      group: 'interrupt (the default)',
      name: 'aborts the model stream at once, drops the half text, and answers the new message',
      chat: chats.interruptStream,
      words: ['tell me a long story', 'actually, just say hi'],
      busy: 'streaming',
      arrivals: ([, m2]) => [{ send: [m2!], sees: [`echo: ${m2}`] }],
      check: async ({ m: [m1, m2], firstRequest, sentAt, snapshot, requests, seen }) => {
        const aborted = await waitForModelRequest(system, (r) => r.id === firstRequest!.id, { state: 'aborted', what: 'for the long story' });
        expect(aborted.finishedAt).toBeUndefined();
        expect((aborted.abortedAt as number) - sentAt).toBeLessThan(3000);
        expect(seen).toEqual([`echo: ${m2}`]);
        expect(requests.map(userTexts)).toEqual([[m1], [m1, m2]]);
        expect(requests[1]?.finishedAt).toBeDefined();
        expect(requests.flatMap(recoveryNoteIndexes)).toEqual([]);
        expect(transcript(snapshot)).toEqual([
          ['user', m1],
          ['user', m2],
          ['assistant', `echo: ${m2}`],
        ]);
        expect(snapshot.messages.some((m) => m.content.includes('once upon'))).toBe(false);
        expect(snapshot.turns.map((t) => t.status)).toEqual(['interrupted', 'completed']);
      },
    },
    {
      group: 'interrupt (the default)',
      name: 'cancels a running tool, keeps completed calls and cancelled results, and sends the recovery note exactly once',
      chat: chats.interruptTool,
      words: ['check the time, then wait', 'never mind, what is new?', 'and one more thing'],
      busy: 'tool',
      arrivals: ([, m2, m3]) => [
        { send: [m2!], sees: [`echo: ${m2}`], withinMs: 5000 },
        { send: [m3!], sees: [`echo: ${m2}`, `echo: ${m3}`] },
      ],
      check: ({ m: [m1, m2, m3], snapshot, requests, seen }) => {
        expect(seen).toEqual([`echo: ${m2}`, `echo: ${m3}`]);
        expect(snapshot.turns.map((t) => t.status)).toEqual(['interrupted', 'completed', 'completed']);
        expect(snapshot.turns[0]!.ended_at!.getTime() - eventOf(snapshot, m2!).received_at.getTime()).toBeLessThan(3000);

        const [user1, assistant, timeResult, waitResult, calcResult, ...rest] = snapshot.messages;
        expect([user1?.role, user1?.content]).toEqual(['user', m1]);
        expect(assistant?.role).toBe('assistant');
        expect(assistant?.tool_calls?.map((c) => c.name)).toEqual(['current_time', 'wait', 'calculator']);
        expect([timeResult, waitResult, calcResult].map((m) => [m?.role, m?.tool_name, m?.tool_call_id])).toEqual(
          assistant!.tool_calls!.map((c) => ['tool', c.name, c.id]),
        );
        // current_time finished; wait was running and got aborted; calculator never started.
        expect(Number.isNaN(Date.parse(timeResult!.content))).toBe(false);
        expect(waitResult?.content.startsWith(cancelledResultPrefix)).toBe(true);
        expect(calcResult?.content.startsWith(cancelledResultPrefix)).toBe(true);
        expect(rest.map((m) => [m.role, m.content])).toEqual([
          ['user', m2],
          ['assistant', `echo: ${m2}`],
          ['user', m3],
          ['assistant', `echo: ${m3}`],
        ]);

        // The model: the tool request, then m2's turn with the note between the tool tail and m2, then m3's turn without it.
        expect(requests.map(lastUserText)).toEqual([m1, m2, m3]);
        const [, second, third] = requests;
        expect(roles(second)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'tool', 'system', 'user']);
        expect(recoveryNoteIndexes(second!)).toEqual([6]);
        expect(second!.body.messages[6]?.content?.startsWith(recoveryNotePrefix)).toBe(true);
        expect(requests.flatMap((r) => recoveryNoteIndexes(r).map(() => r.id))).toEqual([second!.id]);
        expect(roles(third)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'tool', 'user', 'assistant', 'user']);
        // Acknowledged under the tail's key once it reached the model.
        expect(snapshot.recoveryAckKey).toBe(findToolTail(snapshot.messages.slice(0, 5).map(toTailMessage))?.key);
      },
    },
    {
      group: 'interrupt (the default)',
      name: 'takes every message already pending when a turn starts into that turn',
      chat: chats.interruptPendingTogether,
      words: ['first', 'second', 'third'],
      busy: 'delivering',
      arrivals: ([m1, m2, m3]) => [{ send: [m2!, m3!], sees: [`echo: ${m1}`, `echo: ${m3}`] }],
      check: ({ m: [m1, m2, m3], snapshot, requests, seen }) => {
        expect(seen).toEqual([`echo: ${m1}`, `echo: ${m3}`]);
        expect(requests).toHaveLength(2);
        expect(roles(requests[1])).toEqual(['system', 'user', 'assistant', 'user', 'user']);
        expect(userTexts(requests[1]!)).toEqual([m1, m2, m3]);
        expect(requests.every((r) => r.abortedAt === undefined)).toBe(true);
        expect(transcript(snapshot)).toEqual([
          ['user', m1],
          ['assistant', `echo: ${m1}`],
          ['user', m2],
          ['user', m3],
          ['assistant', `echo: ${m3}`],
        ]);
        expect(snapshot.turns.map((t) => t.status)).toEqual(['completed', 'completed']);
        expect(eventOf(snapshot, m2!).turn_id).toBe(snapshot.turns[1]!.id);
        expect(eventOf(snapshot, m3!).turn_id).toBe(snapshot.turns[1]!.id);
      },
    },
    {
      group: '/stop',
      name: 'cancels a streaming turn ("Stopped."), and says so when nothing runs',
      chat: chats.stopStream,
      words: ['tell me a long story', 'hello again'],
      busy: 'streaming',
      arrivals: ([, m2]) => [
        { send: ['/stop'], sees: ['Stopped.'] },
        { send: ['/stop'], sees: ['Stopped.', 'Nothing was running.'] },
        { send: [m2!], sees: ['Stopped.', 'Nothing was running.', `echo: ${m2}`] },
      ],
      check: async ({ m: [m1, m2], firstRequest, snapshot, requests, seen }) => {
        const aborted = await waitForModelRequest(system, (r) => r.id === firstRequest!.id, { state: 'aborted', what: 'for the stopped story' });
        expect(aborted.finishedAt).toBeUndefined();
        expect(seen).toHaveLength(3);
        expect(snapshot.turns.map((t) => t.status)).toEqual(['cancelled', 'completed']);
        expect(transcript(snapshot)).toEqual([
          ['user', m1],
          ['user', m2],
          ['assistant', `echo: ${m2}`],
        ]);
        // No tool tail, so no note.
        expect(requests.map(userTexts)).toEqual([[m1], [m1, m2]]);
        expect(requests.flatMap(recoveryNoteIndexes)).toEqual([]);
      },
    },
    {
      group: '/stop',
      name: 'cancels a running tool in queue mode; the next turn carries the recovery note',
      chat: chats.stopToolQueue,
      mode: 'queue',
      words: ['wait a long time', 'are you there?'],
      busy: 'tool',
      arrivals: ([, m2]) => [
        { send: ['/stop'], sees: ['Stopped.'], withinMs: 5000 },
        { send: [m2!], sees: ['Stopped.', `echo: ${m2}`] },
      ],
      check: ({ m: [m1, m2], snapshot, requests }) => {
        expect(snapshot.busyMode).toBe('queue');
        expect(snapshot.turns.map((t) => t.status)).toEqual(['cancelled', 'completed']);
        expect(snapshot.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
        expect(snapshot.messages[2]?.content.startsWith(cancelledResultPrefix)).toBe(true);
        expect(requests.map(lastUserText)).toEqual([m1, m2]);
        expect(roles(requests[1])).toEqual(['system', 'user', 'assistant', 'tool', 'system', 'user']);
        expect(recoveryNoteIndexes(requests[1]!)).toEqual([4]);
      },
    },
    {
      group: 'queue',
      name: 'lets a message sent during streaming wait for its own turn',
      chat: chats.queueStream,
      mode: 'queue',
      words: ['tell me a short story', 'and then?'],
      busy: 'streaming',
      arrivals: ([, m2]) => [{ send: [m2!], sees: [shortStoryText.trim(), `echo: ${m2}`] }],
      check: ({ m: [m1, m2], snapshot, requests }) => {
        expect(requests.map((r) => [userTexts(r), r.abortedAt === undefined && r.finishedAt !== undefined])).toEqual([
          [[m1], true],
          [[m1, m2], true],
        ]);
        expect(roles(requests[1])).toEqual(['system', 'user', 'assistant', 'user']);
        expect(transcript(snapshot)).toEqual([
          ['user', m1],
          ['assistant', shortStoryText],
          ['user', m2],
          ['assistant', `echo: ${m2}`],
        ]);
        expect(snapshot.turns.map((t) => t.status)).toEqual(['completed', 'completed']);
        // m2 really arrived while the first turn ran.
        expect(eventOf(snapshot, m2!).received_at.getTime()).toBeLessThan(snapshot.turns[0]!.ended_at!.getTime());
      },
    },
    {
      group: 'queue',
      name: 'lets a message sent during a running tool wait; the tool turn finishes first',
      chat: chats.queueTool,
      mode: 'queue',
      words: ['wait a moment', 'thanks'],
      busy: 'tool',
      arrivals: ([m1, m2]) => [{ send: [m2!], sees: [`echo: ${m1}`, `echo: ${m2}`] }],
      check: ({ m: [m1, m2], snapshot, requests }) => {
        // The tool turn's follow-up request does not see m2; m2's own turn does.
        expect(requests.map(userTexts)).toEqual([[m1], [m1], [m1, m2]]);
        expect(requests.every((r) => r.abortedAt === undefined)).toBe(true);
        expect(transcript(snapshot)).toEqual([
          ['user', m1],
          ['assistant', ''],
          ['tool', `waited ${shortWaitSeconds} seconds`],
          ['assistant', `echo: ${m1}`],
          ['user', m2],
          ['assistant', `echo: ${m2}`],
        ]);
        expect(snapshot.turns.map((t) => t.status)).toEqual(['completed', 'completed']);
        expect(eventOf(snapshot, m2!).received_at.getTime()).toBeLessThan(snapshot.turns[0]!.ended_at!.getTime());
      },
    },
    {
      group: 'collect',
      name: 'merges two messages sent during streaming into one follow-up turn',
      chat: chats.collectStream,
      mode: 'collect',
      words: ['tell me a short story', 'also,', 'make it funny'],
      busy: 'streaming',
      arrivals: ([, m2, m3]) => [{ send: [m2!, m3!], sees: [shortStoryText.trim(), `echo: ${m3}`] }],
      check: ({ m: [m1, m2, m3], snapshot, requests }) => {
        expect(requests).toHaveLength(2);
        expect(requests.every((r) => r.abortedAt === undefined)).toBe(true);
        expect(roles(requests[1])).toEqual(['system', 'user', 'assistant', 'user', 'user']);
        expect(userTexts(requests[1]!)).toEqual([m1, m2, m3]);
        expect(transcript(snapshot)).toEqual([
          ['user', m1],
          ['assistant', shortStoryText],
          ['user', m2],
          ['user', m3],
          ['assistant', `echo: ${m3}`],
        ]);
        expect(snapshot.turns.map((t) => t.status)).toEqual(['completed', 'completed']);
        const merged = snapshot.turns[1]!;
        expect([eventOf(snapshot, m2!).turn_id, eventOf(snapshot, m3!).turn_id]).toEqual([merged.id, merged.id]);
        expect(eventOf(snapshot, m3!).received_at.getTime()).toBeLessThan(snapshot.turns[0]!.ended_at!.getTime());
        expect(merged.started_at.getTime() - eventOf(snapshot, m3!).received_at.getTime()).toBeGreaterThanOrEqual(collectDebounceMs - 10);
      },
    },
    {
      group: 'collect',
      name: 'merges two messages sent during a running tool; the tool turn does not see them',
      chat: chats.collectTool,
      mode: 'collect',
      words: ['wait a moment', 'one', 'two'],
      busy: 'tool',
      arrivals: ([m1, m2, m3]) => [{ send: [m2!, m3!], sees: [`echo: ${m1}`, `echo: ${m3}`] }],
      check: ({ m: [m1, m2, m3], snapshot, requests }) => {
        expect(requests.map(userTexts)).toEqual([[m1], [m1], [m1, m2, m3]]);
        expect(roles(requests[2])).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user', 'user']);
        expect(transcript(snapshot)).toEqual([
          ['user', m1],
          ['assistant', ''],
          ['tool', `waited ${shortWaitSeconds} seconds`],
          ['assistant', `echo: ${m1}`],
          ['user', m2],
          ['user', m3],
          ['assistant', `echo: ${m3}`],
        ]);
        expect(snapshot.turns.map((t) => t.status)).toEqual(['completed', 'completed']);
      },
    },
    {
      group: 'collect',
      name: 'waits for the debounce before answering a burst sent while idle, then answers it once',
      chat: chats.collectIdleBurst,
      mode: 'collect',
      words: ['quick one', 'quick two'],
      busy: 'idle',
      arrivals: ([, m2]) => [{ send: [m2!], sees: [`echo: ${m2}`] }],
      check: ({ m: [m1, m2], snapshot, requests }) => {
        expect(requests.map(userTexts)).toEqual([[m1, m2]]);
        expect(snapshot.turns).toHaveLength(1);
        expect(snapshot.turns[0]!.started_at.getTime() - eventOf(snapshot, m2!).received_at.getTime()).toBeGreaterThanOrEqual(collectDebounceMs - 10);
      },
    },
    {
      group: 'steer',
      name: 'adds a message sent during a running tool to the same turn, after the tool result',
      chat: chats.steerTool,
      mode: 'steer',
      words: ['wait a moment', 'and tell me when you are done'],
      busy: 'tool',
      arrivals: ([, m2]) => [{ send: [m2!], sees: [`echo: ${m2}`] }],
      check: ({ m: [m1, m2], snapshot, requests, seen }) => {
        expect(seen).toHaveLength(2);
        expect(requests).toHaveLength(2);
        expect(roles(requests[1])).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
        expect(userTexts(requests[1]!)).toEqual([m1, m2]);
        expect(transcript(snapshot)).toEqual([
          ['user', m1],
          ['assistant', ''],
          ['tool', `waited ${shortWaitSeconds} seconds`],
          ['user', m2],
          ['assistant', `echo: ${m2}`],
        ]);
        expect(snapshot.turns.map((t) => t.status)).toEqual(['completed']);
        const turnId = snapshot.turns[0]!.id;
        expect([eventOf(snapshot, m1!).turn_id, eventOf(snapshot, m2!).turn_id]).toEqual([turnId, turnId]);
        expect(snapshot.messages[3]?.inbound_event_id).toBe(eventOf(snapshot, m2!).id);
      },
    },
    {
      group: 'steer',
      name: 'makes a message sent during the last model call the next turn',
      chat: chats.steerStream,
      mode: 'steer',
      words: ['tell me a short story', 'nice'],
      busy: 'streaming',
      arrivals: ([, m2]) => [{ send: [m2!], sees: [shortStoryText.trim(), `echo: ${m2}`] }],
      check: ({ m: [m1, m2], snapshot, requests }) => {
        expect(requests.map(userTexts)).toEqual([[m1], [m1, m2]]);
        expect(requests.every((r) => r.abortedAt === undefined)).toBe(true);
        expect(snapshot.turns.map((t) => t.status)).toEqual(['completed', 'completed']);
        expect(transcript(snapshot)).toEqual([
          ['user', m1],
          ['assistant', shortStoryText],
          ['user', m2],
          ['assistant', `echo: ${m2}`],
        ]);
      },
    },
  ];

  for (const group of new Set(cases.map((c) => c.group))) {
    describe(group, () => {
      for (const c of cases.filter((candidate) => candidate.group === group)) it(c.name, () => runCase(c));
    });
  }

  it('/busy switches the mode of one conversation: queue lets a stream finish, interrupt aborts the next', async () => {
    const chat = chats.switching;
    const m1 = text(chat, 'tell me a short story');
    const m2 = text(chat, 'go on');
    const m3 = text(chat, 'tell me a long story');
    const m4 = text(chat, 'stop, new question');
    await send(chat, '/busy');
    expect(await replies(chat, 1)).toEqual([
      'Busy mode is interrupt: a new message stops my current answer and I answer the new one. Choose one of: interrupt, queue, collect, steer.',
    ]);
    await send(chat, '/busy queue');
    expect((await replies(chat, 2))[1]).toBe(busyReplies.queue);
    expect((await loadChat(system, chat)).busyMode).toBe('queue');

    await send(chat, m1);
    await waitForRequestFor(system, m1);
    await send(chat, m2);
    expect((await replies(chat, 4)).slice(2)).toEqual([shortStoryText.trim(), `echo: ${m2}`]);

    await send(chat, '/busy interrupt');
    expect((await replies(chat, 5))[4]).toBe(busyReplies.interrupt);
    await send(chat, m3);
    const long = await waitForRequestFor(system, m3);
    await send(chat, m4);
    await waitForModelRequest(system, (r) => r.id === long.id, { state: 'aborted', what: 'for the long story' });
    expect((await replies(chat, 6))[5]).toBe(`echo: ${m4}`);
    await send(chat, '/status');
    const status = (await replies(chat, 7))[6];
    expect(status).toContain('Busy mode: interrupt.');

    const { snapshot, requests, seen } = await settle(chat);
    expect(seen).toHaveLength(7);
    expect(snapshot.busyMode).toBe('interrupt');
    expect(snapshot.turns.map((t) => t.status)).toEqual(['completed', 'completed', 'interrupted', 'completed']);
    expect(requests.map((r) => r.abortedAt !== undefined)).toEqual([false, false, true, false]);
    expect(snapshot.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([m1, m2, m3, m4]);
  });

  describe('50 messages in 2 seconds into one conversation', () => {
    async function burst(chatId: number, mode: 'interrupt' | 'queue' | 'collect' | 'steer', afterBurst?: () => Promise<void>) {
      if (mode !== 'interrupt') {
        await send(chatId, `/busy ${mode}`);
        expect(await replies(chatId, 1)).toEqual([busyReplies[mode]]);
      }
      const texts = Array.from({ length: 50 }, (_, i) => text(chatId, `burst ${String(i).padStart(2, '0')}`));
      const outcomes: (string | undefined)[] = [];
      const startedAt = Date.now();
      for (const [i, message] of texts.entries()) {
        // Pacing the input (one every 40 ms), not waiting for the system.
        const due = startedAt + i * 40;
        if (due > Date.now()) await sleep(due - Date.now());
        const { status, outcome } = await sendText(system, chatId, message);
        expect(status).toBe(200);
        outcomes.push(outcome);
      }
      await afterBurst?.();
      await waitForIdle(system, [chatId], 60_000);
      const [snapshot, all, sent] = await Promise.all([loadChat(system, chatId), modelRequests(system), sentTo(system, chatId)]);
      const requests = requestsOfChat(all, chatId);
      // Asserted by each case after its specific expectations, so a failure names the specific problem first.
      const problems = checkAll(snapshot, requests, sent);

      const refused = snapshot.events.filter((e) => e.status === 'refused');
      const accepted = acceptedInput(snapshot);
      const stored = snapshot.messages.filter((m) => m.role === 'user');
      expect(outcomes.filter((o) => o === 'refused')).toHaveLength(refused.length);
      expect(refused.length + stored.length).toBe(50);
      // Refused messages are the latest ones: nothing accepted after a refusal was stored out of order (checked by (a)).
      expect(stored.map((m) => m.content)).toEqual(accepted.map((e) => e.text));

      const seen = sent.map((m) => m.text);
      const notices = seen.filter((t) => t.startsWith(overflowNoticePrefix));
      const answers = seen.filter((t) => t.startsWith('echo: '));
      // Every completed turn answered its last message, in order; the last accepted message is answered.
      expect(answers).toEqual(expectedEchoReplies(snapshot));
      expect(answers.at(-1)).toBe(`echo: ${accepted.at(-1)?.text}`);
      const commands = snapshot.events.filter((e) => parseChatCommand(e.text) !== null).length;
      expect(seen).toHaveLength(answers.length + notices.length + commands);
      return { snapshot, requests, refused, notices, answers, accepted, seen, problems };
    }

    it('interrupt', async () => {
      const { snapshot, refused, notices, problems } = await burst(chats.burstInterrupt, 'interrupt');
      expect(notices).toHaveLength(refused.length > 0 ? 1 : 0);
      expect(snapshot.turns.at(-1)?.status).toBe('completed');
      expect(snapshot.turns.filter((t) => t.status === 'interrupted').length).toBeGreaterThan(0);
      expect(problems).toEqual([]);
    });

    it('queue: one turn per message; past the cap input is refused and the user is told once', async () => {
      // burst 00's model request hangs, so its turn runs through the whole burst; /stop ends it afterwards.
      const { snapshot, refused, notices, answers, accepted, seen, problems } = await burst(chats.burstQueue, 'queue', async () => {
        expect((await sendText(system, chats.burstQueue, '/stop')).outcome).toBe('accepted');
      });
      // 32 waiting (burst 00 running, 01–31 queued) when burst 32 arrives: 32–49 are refused.
      expect(refused.map((e) => e.text)).toEqual(Array.from({ length: 18 }, (_, i) => text(chats.burstQueue, `burst ${32 + i}`)));
      expect(notices).toHaveLength(1);
      expect(snapshot.turns.map((t) => t.status)).toEqual(['cancelled', ...Array<string>(31).fill('completed')]);
      expect(answers).toEqual(accepted.slice(1).map((e) => `echo: ${e.text}`));
      // The notice was queued (outbox) while the first turn still ran, so it comes before every later reply.
      const noticeRow = snapshot.outbox.find((o) => o.text.startsWith(overflowNoticePrefix));
      const firstReplyRow = snapshot.outbox.find((o) => o.text === answers[0]);
      expect(noticeRow!.id).toBeLessThan(firstReplyRow!.id);
      expect(seen.slice(0, 3), 'the overflow notice is delivered in outbox order, before the replies committed after it').toEqual([
        busyReplies.queue,
        noticeRow!.text,
        answers[0],
      ]);
      expect(seen.at(-1)).toBe('Stopped.');
      expect(problems).toEqual([]);
    });

    it('collect', async () => {
      const { snapshot, refused, notices, seen, problems } = await burst(chats.burstCollect, 'collect');
      expect(notices).toHaveLength(refused.length > 0 ? 1 : 0);
      expect(snapshot.turns.every((t) => t.status === 'completed')).toBe(true);
      // The debounce holds the burst back, so it reaches the cap: the notice is queued before the first reply.
      expect(seen, 'the overflow notice is delivered in outbox order, before the replies committed after it').toEqual(snapshot.outbox.map((o) => o.text));
      expect(problems).toEqual([]);
    });

    it('steer', async () => {
      const { snapshot, refused, notices, problems } = await burst(chats.burstSteer, 'steer');
      expect(notices).toHaveLength(refused.length > 0 ? 1 : 0);
      expect(snapshot.turns.every((t) => t.status === 'completed')).toBe(true);
      // The tool turn took the messages that arrived during its wait at its next model call.
      const first = snapshot.turns[0]!;
      expect(snapshot.events.filter((e) => e.turn_id === first.id).length).toBeGreaterThan(1);
      expect(problems).toEqual([]);
    });
  });
});

/**
 * A /stop that reaches the worker after the model has finished but before
 * the turn is committed. Deterministic: the test holds a lock on the outbox
 * table so the turn's commit waits, sends /stop, waits until the worker has
 * applied the stop signal (its interrupt-latency histogram counts it), then
 * lets the commit go. Whatever the product chooses, the /stop reply must
 * agree with what happened to the turn.
 */
describe('/stop racing the commit of a finished turn (in-process worker)', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1 });
  }, 60_000);
  afterAll(async () => {
    await system?.close();
  });

  async function interruptsApplied(): Promise<number> {
    const worker = system.workers[0] as { url: string };
    const metrics = await (await fetch(`${worker.url}/metrics`)).text();
    const line = metrics.split('\n').find((l) => l.startsWith('switchboard_interrupt_latency_seconds_count'));
    return Number(line?.split(' ').at(-1) ?? 0);
  }

  it('answers "Stopped." only if the turn was cancelled, "Nothing was running." if its answer went out', async () => {
    const chat = 2701;
    const m1 = text(chat, 'a quick question');
    const reserved = await system.sql.reserve();
    try {
      await reserved`begin`;
      await reserved`lock table outbox in exclusive mode`;
      await sendText(system, chat, m1);
      await waitForRequestFor(system, m1, 'finished');
      // The model has answered; the turn's commit (which inserts its reply into the outbox) now waits on our lock.
      await waitForCondition('the turn commit to wait on the outbox lock', async () => {
        const [row] = await system.sql<{ n: number }[]>`
          select count(*)::int as n from pg_locks where relation = 'outbox'::regclass and not granted`;
        return (row?.n ?? 0) > 0;
      });
      const before = await interruptsApplied();
      expect((await sendText(system, chat, '/stop')).status).toBe(200);
      await waitForCondition('the worker to apply the stop signal', async () => (await interruptsApplied()) > before);
    } finally {
      await reserved`commit`;
      reserved.release();
    }
    await waitForIdle(system, [chat]);
    const [snapshot, sent] = await Promise.all([loadChat(system, chat), sentTo(system, chat)]);
    const outcome = { turns: snapshot.turns.map((t) => t.status), seen: sent.map((m) => m.text) };
    const cancelled = { turns: ['cancelled'], seen: ['Stopped.'] };
    const completed = { turns: ['completed'], seen: [`echo: ${m1}`, 'Nothing was running.'] };
    // Either outcome is consistent; "Stopped." after the full answer was delivered is not.
    expect([cancelled, completed], `the /stop reply contradicts the turn: ${JSON.stringify(outcome)}`).toContainEqual(outcome);
  });
});

function toTailMessage(m: ChatSnapshot['messages'][number]) {
  return { role: m.role, content: m.content, toolCallId: m.tool_call_id, toolName: m.tool_name, toolCalls: m.tool_calls };
}
