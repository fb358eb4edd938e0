import { describe, expect, it } from 'vitest';
import { recoveryNotePrefix, type ChatMessage, type ChatSnapshot, type ModelRequest, type StoredMessage } from './turn-helpers.ts';
import { resumeNotePrefix } from './restart-helpers.ts';
import {
  checkConversationEnd,
  checkEndedHoldingsCommittedNothing,
  checkFaultMarks,
  checkOneRequestInFlight,
  checkRefusals,
  checkResumeNotes,
  checkRestartCount,
  checkSupersededCommittedNothing,
  checkTurnOutcomes,
} from './turn-fault-invariants.ts';
import type { StoredEvent, StoredOutbox, StoredTurn } from './turn-helpers.ts';
import { checkStreamedReplies } from './turn-stream-invariants.ts';
import { checkDelivered, checkNoApiOnlyText, checkStopReplies, checkTurnsDoNotOverlap, checkUserMessages } from './turn-invariants.ts';

// The invariant checks must catch what they claim to: each is fed a hand-made violation here
// ((d), the recovery note, in turn-note-invariants.test.ts; the chain of (a) in turn-chain.test.ts).

const note: ChatMessage = { role: 'system', content: `${recoveryNotePrefix} before you read the results of its last tool calls.` };
const sys: ChatMessage = { role: 'system', content: 'You are Switchboard.' };
const user = (content: string): ChatMessage => ({ role: 'user', content });
const calls = (id: string): ChatMessage => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'wait', arguments: '{}' } }] });
const tool = (id: string): ChatMessage => ({ role: 'tool', content: 'cancelled: …', tool_call_id: id });

let nextRequestId = 1;
const request = (...messages: ChatMessage[]): ModelRequest => ({ id: nextRequestId++, receivedAt: 0, body: { messages }, stream: true, respondedAt: 1, finishedAt: 1 });

function stored(seq: number, turn: number, role: StoredMessage['role'], content: string, extra: Partial<StoredMessage> = {}): StoredMessage {
  return { session_id: 1, seq, role, content, tool_calls: null, tool_call_id: null, tool_name: null, inbound_event_id: null, turn_id: turn, ...extra };
}

function snapshot(messages: StoredMessage[], partial: Partial<ChatSnapshot> = {}): ChatSnapshot {
  return { chatId: 1, conversationId: 1, busyMode: null, recoveryAckKey: null, messages, events: [], turns: [], outbox: [], ...partial };
}

describe('turn invariants', () => {
  it('(a) flags a missing, duplicated or reordered user message', () => {
    const events = [
      { id: 1, text: 'a', status: 'done' as const, turn_id: 1, received_at: new Date() },
      { id: 2, text: '/stop', status: 'done' as const, turn_id: null, received_at: new Date() },
      { id: 3, text: 'b', status: 'done' as const, turn_id: 2, received_at: new Date() },
    ];
    const good = snapshot([stored(1, 1, 'user', 'a', { inbound_event_id: 1 }), stored(2, 2, 'user', 'b', { inbound_event_id: 3 })], { events });
    expect(checkUserMessages(good)).toEqual([]);
    const swapped = snapshot([stored(1, 1, 'user', 'b', { inbound_event_id: 3 }), stored(2, 2, 'user', 'a', { inbound_event_id: 1 })], { events });
    expect(checkUserMessages(swapped)).toHaveLength(1);
    const twice = snapshot([...good.messages, stored(3, 2, 'user', 'b', { inbound_event_id: 3 })], { events });
    expect(checkUserMessages(twice)).toHaveLength(1);
  });

  it('(b) flags stored API-only text, (c) overlapping or running turns, (g) a wrong /stop reply', () => {
    expect(checkNoApiOnlyText(snapshot([stored(1, 1, 'user', `x ${note.content}`)]))).toHaveLength(1);
    const at = (s: number) => new Date(1_000_000 + s * 1000);
    const turns = [
      { id: 1, status: 'completed', error: null, started_at: at(0), ended_at: at(2) },
      { id: 2, status: 'completed', error: null, started_at: at(1), ended_at: at(3) },
      { id: 3, status: 'running', error: null, started_at: at(4), ended_at: null },
    ];
    expect(checkTurnsDoNotOverlap(snapshot([], { turns }))).toHaveLength(2);
    const stopEvents = [{ id: 9, text: '/stop', status: 'done' as const, turn_id: null, received_at: at(0) }];
    const stoppedButCompleted = snapshot([], { events: stopEvents, turns: [turns[0]!], outbox: [{ id: 1, text: 'Stopped.', status: 'sent', turn_id: null }] });
    expect(checkStopReplies(stoppedButCompleted)).toEqual([expect.stringContaining('0 cancelled turns but 1 "Stopped."')]);
    // "Nothing was running." once a minute (issue 30, finding 5): three /stops with nothing running, one reply, is right; none is not.
    const threeStops = [9, 10, 11].map((id) => ({ ...stopEvents[0]!, id }));
    const nothingOnce = snapshot([], { events: threeStops, turns: [turns[0]!], outbox: [{ id: 1, text: 'Nothing was running.', status: 'sent', turn_id: null }] });
    expect(checkStopReplies(nothingOnce)).toEqual([]);
    expect(checkStopReplies(snapshot([], { events: threeStops, turns: [turns[0]!], outbox: [] }))).toEqual([expect.stringContaining('3 /stop commands but 0 "Stopped." and 0')]);
  });
});

// The fault invariants (h)–(m): times in ms from `base`, on the sim's clock (requests) and Postgres's (turns) alike.
const base = 1_700_000_000_000;
const at = (ms: number) => new Date(base + ms);
const turn = (id: number, status: string, startMs: number, endMs: number, extra: Partial<StoredTurn> = {}): StoredTurn => ({
  id, status, error: null, started_at: at(startMs), ended_at: at(endMs), cut_off_at: null, ...extra,
});
const cutOff = (id: number, startMs: number, endMs: number) => turn(id, 'failed', startMs, endMs, { error: 'cut_off_by_restart', cut_off_at: at(endMs) });
const superseded = (id: number, startMs: number, endMs: number) => turn(id, 'interrupted', startMs, endMs, { error: 'lease_lost' });
const resume: ChatMessage = { role: 'system', content: `${resumeNotePrefix} before it finished.` };
const timed = (receivedMs: number, endMs: number | undefined, ...messages: ChatMessage[]): ModelRequest => ({
  ...request(...messages), receivedAt: base + receivedMs, finishedAt: endMs === undefined ? undefined : base + endMs,
});
const event = (id: number, text: string, turnId: number | null, status: StoredEvent['status'] = 'done', receivedMs = 0): StoredEvent => ({
  id, text, status, turn_id: turnId, received_at: at(receivedMs),
});
const reply = (id: number, turnId: number | null, text = 'echo'): StoredOutbox => ({ id, text, status: 'sent', turn_id: turnId, chunk_index: 0 });

describe('fault invariants', () => {
  it('(h) one accepted resume note per cut-off turn, at a turn start, never without a cut-off', () => {
    const turns = [cutOff(1, 0, 1000), turn(2, 'completed', 1500, 3000), turn(3, 'completed', 4000, 5000)];
    const events = [event(1, 'b', 2), event(2, 'c', 3)];
    const carrier = { ...timed(1600, 2000, sys, user('a'), resume, user('b')), respondedAt: base + 1700 };
    expect(checkResumeNotes(snapshot([], { turns, events }), [carrier, timed(4100, 4500, sys, user('a'), user('b'), user('c'))])).toEqual([]);
    expect(checkResumeNotes(snapshot([], { turns, events }), [carrier, timed(4100, 4500, sys, user('a'), user('b'), resume, user('c'))])).toEqual([
      expect.stringContaining('second resume note for cut-off turn 1'),
    ]);
    // A carrier whose turn was interrupted may never have been read by the worker, answered or not: owed again.
    const interrupted = [turns[0]!, turn(2, 'interrupted', 1500, 3000), turns[2]!];
    expect(checkResumeNotes(snapshot([], { turns: interrupted, events }), [carrier, timed(4100, 4500, sys, user('a'), user('b'), resume, user('c'))])).toEqual([]);
    // A repeat aborted before any answer (a stale holding whose turn never began) reached no one.
    expect(checkResumeNotes(snapshot([], { turns, events }), [carrier, { ...timed(1800, undefined, sys, resume, user('b')), respondedAt: undefined, abortedAt: base + 1803 }])).toEqual([]);
    // A carrier answered while its own turn was being superseded (lease lost): a later turn took its input, the note is owed again.
    const lost = [turns[0]!, superseded(4, 1500, 2500), turn(2, 'completed', 2600, 3000), turns[2]!];
    expect(checkResumeNotes(snapshot([], { turns: lost, events }), [carrier, timed(4100, 4500, sys, user('a'), user('b'), resume, user('c'))])).toEqual([]);
    // A carrier the model never answered (a 500, a stop before acceptance) owes the note again (issue 29, defect 5).
    const refused = { ...timed(1600, undefined, sys, user('a'), resume, user('b')), respondedAt: undefined, status: 500 };
    expect(checkResumeNotes(snapshot([], { turns }), [refused, timed(4100, 4500, sys, user('a'), user('b'), resume, user('c'))])).toEqual([]);
    expect(checkResumeNotes(snapshot([], { turns: turns.slice(1) }), [carrier])).toEqual([expect.stringContaining('no turn was cut off before it')]);
    expect(checkResumeNotes(snapshot([], { turns }), [timed(1600, 2000, sys, user('a'), resume, user('b'), calls('x'), tool('x'))])).toEqual([
      expect.stringContaining('follow-up of its turn and carries the resume note'),
    ]);
  });

  it('(i) two requests in flight only in a lease-loss window, and the superseded turn commits nothing', () => {
    const older = timed(1000, 6000, sys, user('a'));
    const newer = timed(3000, 3500, sys, user('a'), user('b'));
    expect(checkOneRequestInFlight(snapshot([], { turns: [turn(1, 'completed', 900, 6100)] }), [older, newer])).toEqual([
      expect.stringContaining('in flight at once, outside any lease-loss window'),
    ]);
    const window = [superseded(1, 900, 2900), turn(2, 'completed', 2950, 3600)];
    expect(checkOneRequestInFlight(snapshot([], { turns: window }), [older, newer])).toEqual([]);
    expect(checkSupersededCommittedNothing(snapshot([], { turns: window }))).toEqual([]);
    // The sim learned of the older request's end late, but its turn had ended (committed) before the newer one came: no overlap.
    // Likewise a request the sim saw only after its turn had ended.
    const olderTurn = snapshot([stored(1, 1, 'user', 'a'), stored(2, 2, 'user', 'b')], { turns: [turn(1, 'interrupted', 900, 2900), turn(2, 'completed', 2950, 3600)] });
    expect(checkOneRequestInFlight(olderTurn, [older, newer])).toEqual([]);
    expect(checkOneRequestInFlight(olderTurn, [newer, timed(3100, 3200, sys, user('a'))])).toEqual([]);
    // A request aborted unanswered while no turn ran (its holding's row was refused; it tried again) reached no one.
    const refusedRow = { ...timed(2000, undefined, sys, user('a'), user('b')), respondedAt: undefined, abortedAt: base + 3300 };
    expect(checkOneRequestInFlight(snapshot([], { turns: [turn(1, 'completed', 900, 1900), turn(2, 'completed', 3010, 3600)] }), [refusedRow, newer])).toEqual([]);
    expect(checkOneRequestInFlight(snapshot([], { turns: [turn(1, 'completed', 900, 2100), turn(2, 'completed', 3010, 3600)] }), [refusedRow, newer])).toHaveLength(1);
    // An unanswered, aborted request of a turn cut off before the newer one began, recorded late by the sim: no overlap.
    const late = { ...timed(3100, undefined, sys, user('a')), respondedAt: undefined, abortedAt: base + 3200 };
    expect(checkOneRequestInFlight(snapshot([], { turns: [cutOff(1, 900, 2000), turn(2, 'completed', 2950, 3600)] }), [newer, late])).toEqual([]);
    expect(checkOneRequestInFlight(snapshot([], { turns: [turn(1, 'completed', 900, 2000), turn(2, 'completed', 2950, 3600)] }), [newer, late])).toHaveLength(1);
    // A stalled worker's request stays open while it is frozen: its turn, cut off once it was declared dead, opens the window.
    const stall = [cutOff(1, 900, 2900), turn(2, 'completed', 2950, 3600)];
    expect(checkOneRequestInFlight(snapshot([], { turns: stall }), [older, newer], { stalls: true })).toEqual([]);
    expect(checkOneRequestInFlight(snapshot([], { turns: stall }), [older, newer])).toHaveLength(1);
    const committed = snapshot([stored(1, 1, 'user', 'a')], { turns: window, outbox: [reply(1, 1)] });
    expect(checkSupersededCommittedNothing(committed)).toEqual([expect.stringContaining('superseded turn 1 committed 1 messages, 1 outbox rows')]);
  });

  it("(i) a cut-off turn commits nothing, and no message is stored by two turns (a stalled worker resumed)", () => {
    const turns = [cutOff(1, 0, 1000), turn(2, 'completed', 1500, 3000)];
    const good = [stored(1, 2, 'user', 'a', { inbound_event_id: 1 }), stored(2, 2, 'assistant', 'echo: a')];
    expect(checkEndedHoldingsCommittedNothing(snapshot(good, { turns, outbox: [reply(1, 2)] }))).toEqual([]);
    // The stalled worker woke up and committed its cut-off turn 1 after turn 2 had answered the same message.
    const zombie = [stored(1, 1, 'user', 'a', { inbound_event_id: 1 }), stored(2, 1, 'assistant', 'echo: a'), ...good.map((m, i) => ({ ...m, seq: 3 + i }))];
    expect(checkEndedHoldingsCommittedNothing(snapshot(zombie, { turns, outbox: [reply(1, 1), reply(2, 2)] }))).toEqual([
      'cut-off turn 1 committed 2 messages, 1 outbox rows',
      'event 1 was stored by 2 turns (1, 2)',
    ]);
  });

  it('(j) no turn both cut off and completed; cut-offs and supersessions only where their fault was injected', () => {
    const none = { restarts: false, kills: false, leaseLoss: false, maxQueuedInput: 6 };
    const both = { restarts: true, kills: true, leaseLoss: true, maxQueuedInput: 6 };
    const turns = [cutOff(1, 0, 1000), superseded(2, 1000, 2000)];
    expect(checkFaultMarks(snapshot([], { turns }), both)).toEqual([]);
    expect(checkFaultMarks(snapshot([], { turns }), none)).toEqual([expect.stringContaining('no worker was stopped'), expect.stringContaining('never lost its lease')]);
    const cutAndCompleted = turn(3, 'completed', 0, 1000, { cut_off_at: at(500) });
    expect(checkFaultMarks(snapshot([], { turns: [cutAndCompleted] }), both)).toEqual([
      expect.stringContaining('both cut off and completed'),
      expect.stringContaining('cut-off turn 3 is completed'),
    ]);
  });

  it('(k) one reply or notice per answering turn, none otherwise; every message taken by a committed turn that stored it', () => {
    const turns = [turn(1, 'interrupted', 0, 100), turn(2, 'completed', 100, 200)];
    const messages = [stored(1, 1, 'user', 'a', { inbound_event_id: 1 }), stored(2, 2, 'user', 'b', { inbound_event_id: 2 }), stored(3, 2, 'assistant', 'echo: b')];
    const events = [event(1, 'a', 1), event(2, 'b', 2)];
    expect(checkTurnOutcomes(snapshot(messages, { turns, events, outbox: [reply(1, 2)] }))).toEqual([]);
    expect(checkTurnOutcomes(snapshot(messages, { turns, events, outbox: [reply(1, 2), reply(2, 2), reply(3, 1)] }))).toEqual([
      expect.stringContaining('turn 1 (interrupted) sent 1 replies, wants 0'),
      expect.stringContaining('turn 2 (completed) sent 2 replies, wants 1'),
    ]);
    const takenByCutOff = snapshot(messages, { turns: [cutOff(1, 0, 100), turns[1]!], events, outbox: [reply(1, 2)] });
    expect(checkTurnOutcomes(takenByCutOff)).toEqual([expect.stringContaining('event 1 was taken by turn 1 (failed/cut_off_by_restart)')]);
    const unanswered = snapshot(messages.slice(0, 1), { turns: turns.slice(0, 1), events: [event(1, 'a', 1)] });
    expect(checkTurnOutcomes(unanswered)).toEqual([expect.stringContaining('the last message (event 1) was not answered')]);
  });

  it('(k) a turn that streamed and ended without an answer may leave its message finished with the marker, once', () => {
    const turns = [turn(1, 'interrupted', 0, 100), turn(2, 'completed', 100, 200)];
    const messages = [stored(1, 1, 'user', 'a', { inbound_event_id: 1 }), stored(2, 2, 'user', 'b', { inbound_event_id: 2 }), stored(3, 2, 'assistant', 'echo: b')];
    const events = [event(1, 'a', 1), event(2, 'b', 2)];
    const stopped = (id: number, turnId: number): StoredOutbox => ({ ...reply(id, turnId, 'echo: a lo\n\n[stopped]'), streamed: true });
    expect(checkTurnOutcomes(snapshot(messages, { turns, events, outbox: [stopped(1, 1), reply(2, 2)] }))).toEqual([]);
    expect(checkTurnOutcomes(snapshot(messages, { turns, events, outbox: [stopped(1, 1), stopped(2, 1), reply(3, 2)] }))).toEqual([
      expect.stringContaining('turn 1 (interrupted) ended 2 streamed message(s) with the stopped marker'),
    ]);
    // The marker proves nothing for a completed turn: its reply is missing.
    expect(checkTurnOutcomes(snapshot(messages, { turns, events, outbox: [stopped(1, 2)] }))).toEqual([
      expect.stringContaining('turn 2 (completed) sent 0 replies, wants 1'),
      expect.stringContaining('turn 2 (completed) ended 1 streamed message(s)'),
    ]);
  });

  it('(l) the conversation ends active with restart_count 0', () => {
    expect(checkConversationEnd(snapshot([], { status: 'active', restartCount: 0 }))).toEqual([]);
    expect(checkConversationEnd(snapshot([], { status: 'suspended', restartCount: 1 }))).toHaveLength(2);
  });

  it('(l) the idle restart counter counts the restarts since a reply last cleared it, no more, no fewer', () => {
    // Turn 1 was cut off at 1000 ms, turn 2 answered and its reply cleared the counter at 2100 ms,
    // then two restarts (turn 3 at 3000 ms; turns 4 and 5 cut by one statement at 4000 ms).
    const turns = [cutOff(1, 0, 1000), turn(2, 'completed', 1500, 2000), cutOff(3, 2500, 3000), cutOff(4, 3500, 4000), cutOff(5, 3600, 4000)];
    const outbox = [{ ...reply(1, 2), sent_at: at(2100) }];
    const idle = (restartCount: number) => ({ restartCount, at: at(5000) });
    expect(checkRestartCount(snapshot([], { turns, outbox }), idle(2))).toEqual([]);
    expect(checkRestartCount(snapshot([], { turns, outbox }), idle(3))).toEqual([expect.stringContaining('restart_count was 3 while idle, but 2 restart(s)')]);
    expect(checkRestartCount(snapshot([], { turns, outbox }), idle(1))).toHaveLength(1);
    // A notice's delivery (no completed turn) clears nothing.
    expect(checkRestartCount(snapshot([], { turns, outbox: [{ ...reply(1, null), sent_at: at(4500) }] }), idle(3))).toEqual([]);
  });

  it('(m) a refusal only with the cap really waiting', () => {
    // Events 1–3 were taken by a turn that committed at 500 ms, before event 4 arrived at 1000 ms: nothing waited.
    const turns = [turn(1, 'completed', 0, 500)];
    const events = [event(1, 'a', 1), event(2, 'b', 1), event(3, 'c', 1), event(4, 'd', null, 'refused', 1000)];
    expect(checkRefusals(snapshot([], { turns, events }), 3)).toEqual([expect.stringContaining('event 4 was refused with at most 0 events waiting (cap 3)')]);
    const later = [turn(1, 'completed', 0, 2000)];
    expect(checkRefusals(snapshot([], { turns: later, events }), 3)).toEqual([]);
  });

  it('tolerances count only what they name: a repeated row, a lost "Stopped."', () => {
    const outbox = [reply(1, 1, 'one'), reply(2, 2, 'two')];
    const sent = (...texts: string[]) => texts.map((text, i) => ({ message_id: i + 1, chat_id: 1, text }));
    const repeats = { resent: 0, unrecordedStreams: 0 };
    expect(checkDelivered(snapshot([], { outbox }), sent('one', 'one', 'two'))).toHaveLength(1);
    expect(checkDelivered(snapshot([], { outbox }), sent('one', 'one', 'two'), repeats)).toEqual([]);
    expect(repeats.resent).toBe(1);
    expect(checkDelivered(snapshot([], { outbox }), sent('two', 'one'), repeats)).toHaveLength(1);
    expect(checkDelivered(snapshot([], { outbox }), sent('one'), repeats)).toHaveLength(1);
    // A stream's first post the kill left unrecorded: tolerated only never edited and with the marker of a growing message.
    expect(checkDelivered(snapshot([], { outbox }), sent('one', 'on …', 'two'), repeats)).toEqual([]);
    expect(repeats.unrecordedStreams).toBe(1);
    expect(checkDelivered(snapshot([], { outbox }), sent('one', 'on …', 'two'))).toHaveLength(1);
    const edited = [...sent('one', 'on …', 'two')].map((m, i) => (i === 1 ? { ...m, edits: [{ text: 'on …', editedAt: 1 }] } : m));
    expect(checkDelivered(snapshot([], { outbox }), edited, repeats)).toHaveLength(1);
    expect(checkDelivered(snapshot([], { outbox }), sent('one', 'tw', 'two'), repeats)).toHaveLength(1);

    const stopEvents = [event(5, '/stop', null)];
    const lostStopped = snapshot([], { events: stopEvents, turns: [turn(1, 'cancelled', 0, 100)], outbox: [reply(1, null, 'Nothing was running.')] });
    const handoffs = { lost: 0 };
    expect(checkStopReplies(lostStopped)).toEqual([expect.stringContaining('1 cancelled turns but 0 "Stopped."')]);
    expect(checkStopReplies(lostStopped, handoffs)).toEqual([]);
    expect(handoffs.lost).toBe(1);
  });
});

describe('streamed replies', () => {
  const delivered = new Date(10_000);
  const row: StoredOutbox = { id: 1, text: 'echo: a long story', status: 'sent', turn_id: 1, chunk_index: 0, streamed: true, platform_message_id: '7', sent_at: delivered };
  const shown = (text: string, ...edits: [string, number][]) => [{ message_id: 7, chat_id: 1, text, edits: edits.map(([t, editedAt]) => ({ text: t, editedAt })) }];

  it('(n) passes a stream that grew and was edited once to the committed reply', () => {
    expect(checkStreamedReplies(snapshot([], { outbox: [row] }), shown('echo: a long story', ['echo: a …', 9_000], ['echo: a long story', 9_900]))).toEqual([]);
  });

  it('(n) flags a stale holder overwriting the delivered reply, and a message left partial', () => {
    const overwritten = shown('echo: a long …', ['echo: a long story', 9_900], ['echo: a long …', 10_200]);
    expect(checkStreamedReplies(snapshot([], { outbox: [row] }), overwritten)).toEqual([
      expect.stringContaining('ends as "echo: a long …"'),
      expect.stringContaining('edited 1 time(s) after its delivery'),
      expect.stringContaining('was left growing'),
    ]);
    // The same text written again after delivery is still an edit nobody should make.
    expect(checkStreamedReplies(snapshot([], { outbox: [row] }), shown('echo: a long story', ['echo: a long story', 9_900], ['echo: a long story', 10_500]))).toHaveLength(1);
    expect(checkStreamedReplies(snapshot([], { outbox: [row] }), [])).toEqual([expect.stringContaining('never showed')]);
  });

  it('(n) flags a partial message no committed reply finished', () => {
    const stray = { message_id: 8, chat_id: 1, text: 'lorem ipsum …', edits: [{ text: 'lorem …', editedAt: 9_500 }, { text: 'lorem ipsum …', editedAt: 9_800 }] };
    expect(checkStreamedReplies(snapshot([], { outbox: [row] }), [...shown('echo: a long story'), stray])).toEqual([expect.stringContaining('message 8 was left growing')]);
    // A SIGKILL between the first post and recording its id is the documented limit (f) counts: only a never-edited post.
    const unrecorded = { message_id: 9, chat_id: 1, text: 'lorem …', edits: [] };
    expect(checkStreamedReplies(snapshot([], { outbox: [row] }), [...shown('echo: a long story'), unrecorded], { kills: true })).toEqual([]);
    expect(checkStreamedReplies(snapshot([], { outbox: [row] }), [...shown('echo: a long story'), unrecorded], { kills: false })).toHaveLength(1);
    expect(checkStreamedReplies(snapshot([], { outbox: [row] }), [...shown('echo: a long story'), stray], { kills: true })).toHaveLength(1);
  });
});
