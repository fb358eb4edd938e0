import { describe, expect, it } from 'vitest';
import { recoveryNotePrefix, type ChatMessage, type ChatSnapshot, type ModelRequest, type StoredMessage } from './turn-helpers.ts';
import { checkNoApiOnlyText, checkRecoveryNotes, checkStopReplies, checkTurnsDoNotOverlap, checkUserMessages } from './turn-invariants.ts';

// The invariant checks must catch what they claim to: each is fed a hand-made violation here.

const note: ChatMessage = { role: 'system', content: `${recoveryNotePrefix} before you read the results of its last tool calls.` };
const sys: ChatMessage = { role: 'system', content: 'You are Switchboard.' };
const user = (content: string): ChatMessage => ({ role: 'user', content });
const calls = (id: string): ChatMessage => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'wait', arguments: '{}' } }] });
const tool = (id: string): ChatMessage => ({ role: 'tool', content: 'cancelled: …', tool_call_id: id });

let nextRequestId = 1;
const request = (...messages: ChatMessage[]): ModelRequest => ({ id: nextRequestId++, receivedAt: 0, body: { messages }, stream: true, respondedAt: 1, finishedAt: 1 });
/** A request the model never answered: the client gave up before any headers. */
const unanswered = (...messages: ChatMessage[]): ModelRequest => ({ ...request(...messages), respondedAt: undefined, finishedAt: undefined, abortedAt: 1 });

function stored(seq: number, turn: number, role: StoredMessage['role'], content: string, extra: Partial<StoredMessage> = {}): StoredMessage {
  return { session_id: 1, seq, role, content, tool_calls: null, tool_call_id: null, tool_name: null, inbound_event_id: null, turn_id: turn, ...extra };
}

function snapshot(messages: StoredMessage[], partial: Partial<ChatSnapshot> = {}): ChatSnapshot {
  return { chatId: 1, conversationId: 1, busyMode: null, recoveryAckKey: null, messages, events: [], turns: [], outbox: [], ...partial };
}

// Turn 1 asked for a tool and was interrupted; turn 2 took "b".
const interrupted = snapshot([
  stored(1, 1, 'user', 'a'),
  stored(2, 1, 'assistant', '', { tool_calls: [{ id: 'x', name: 'wait', arguments: '{}' }] }),
  stored(3, 1, 'tool', 'cancelled: …', { tool_call_id: 'x', tool_name: 'wait' }),
  stored(4, 2, 'user', 'b'),
  stored(5, 2, 'assistant', 'echo: b'),
]);

describe('turn invariants', () => {
  it('(d) accepts one note per tool tail; a follow-up of the same turn carries none', () => {
    const start = request(sys, user('a'), calls('x'), tool('x'), note, user('b'));
    const followUp = request(sys, user('a'), calls('x'), tool('x'), user('b'), calls('y'), tool('y'));
    expect(checkRecoveryNotes(interrupted, [start, followUp])).toEqual([]);
  });

  it('(d) flags a follow-up of the same turn that carries the note again', () => {
    const start = request(sys, user('a'), calls('x'), tool('x'), note, user('b'));
    const followUp = request(sys, user('a'), calls('x'), tool('x'), note, user('b'), calls('y'), tool('y'));
    expect(checkRecoveryNotes(interrupted, [start, followUp])).toEqual([expect.stringContaining('follow-up of its turn and carries the recovery note again')]);
  });

  it('(d) flags a second note for the same tail after the first was accepted', () => {
    const start = request(sys, user('a'), calls('x'), tool('x'), note, user('b'));
    const again = request(sys, user('a'), calls('x'), tool('x'), note, user('b'));
    expect(checkRecoveryNotes(interrupted, [start, again])).toEqual([expect.stringContaining('again, after request')]);
  });

  it('(d) flags a turn that starts over an unacknowledged tail without the note', () => {
    expect(checkRecoveryNotes(interrupted, [request(sys, user('a'), calls('x'), tool('x'), user('b'))])).toEqual([
      expect.stringContaining('without the recovery note'),
    ]);
  });

  // The seed: an interrupted tool tail, then a turn whose request carrying the note never reached the model.
  const carrierCut = snapshot([...interrupted.messages.slice(0, 3), stored(4, 2, 'user', 'b'), stored(5, 3, 'user', 'c'), stored(6, 3, 'assistant', 'echo: c')]);

  it('(d) wants the note again after a carrier the model never answered, behind that turn’s input', () => {
    const cut = unanswered(sys, user('a'), calls('x'), tool('x'), note, user('b'));
    expect(checkRecoveryNotes(carrierCut, [cut, request(sys, user('a'), calls('x'), tool('x'), user('b'), note, user('c'))])).toEqual([]);
    expect(checkRecoveryNotes(carrierCut, [cut, request(sys, user('a'), calls('x'), tool('x'), user('b'), user('c'))])).toEqual([
      expect.stringContaining('without the recovery note'),
    ]);
  });

  it('(d) does not take a steer follow-up, or an interrupted turn’s input before the new one, for a turn start', () => {
    const steered = snapshot([
      stored(1, 1, 'user', 'a'),
      stored(2, 1, 'assistant', '', { tool_calls: [{ id: 'x', name: 'wait', arguments: '{}' }] }),
      stored(3, 1, 'tool', 'waited', { tool_call_id: 'x' }),
      stored(4, 1, 'user', 'b'),
    ]);
    expect(checkRecoveryNotes(steered, [request(sys, user('a'), calls('x'), tool('x'), user('b'))])).toEqual([]);
    // Turn 2 carried the note, the model answered and turn 2 went on with it; turn 3's request needs none.
    const accepted = snapshot([...interrupted.messages.slice(0, 4), stored(5, 2, 'assistant', 'partial'), stored(6, 3, 'user', 'c')]);
    const carrier = request(sys, user('a'), calls('x'), tool('x'), note, user('b'));
    expect(checkRecoveryNotes(accepted, [carrier, request(sys, user('a'), calls('x'), tool('x'), user('b'), user('c'))])).toEqual([]);
  });

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
    expect(checkStopReplies(stoppedButCompleted)).toHaveLength(1);
    const race = { surplusStopped: 0 };
    expect(checkStopReplies(stoppedButCompleted, { knownStopRace: race })).toEqual([]);
    expect(race.surplusStopped).toBe(1);
  });
});
