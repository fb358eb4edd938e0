import { describe, expect, it } from 'vitest';
import { sessionChain } from './turn-chain.ts';
import { at, session, snapshot, stored, summariserRequest, turn } from './turn-fixtures.ts';
import type { StoredEvent, StoredMessage, StoredOutbox, StoredSession } from './turn-helpers.ts';
import { checkUserMessages } from './turn-invariants.ts';

// Check (a) over a compressed conversation: every committed exchange is in the current chain, verbatim or summarised.

/** Exchange n: the user's message (event n) and the reply, both of turn n, stored at n seconds. */
const exchange = (n: number, text: string, seq: number): StoredMessage[] => [
  stored(seq, n, 'user', text, { inbound_event_id: n, created_at: at(n * 1000) }),
  stored(seq + 1, n, 'assistant', `echo: ${text}`, { created_at: at(n * 1000 + 1) }),
];
const summary = stored(1, null, 'assistant', 'SUMMARY: the user sent messages, each answered.', { kind: 'summary', created_at: at(9000) });
const texts = ['a', 'b', 'c', 'd'];
const events: StoredEvent[] = texts.map((text, i) => ({ id: i + 1, text, status: 'done', turn_id: i + 1, received_at: at((i + 1) * 1000) }));
const outbox: StoredOutbox[] = texts.map((text, i) => ({ id: i + 1, text: `echo: ${text}`, status: 'sent', turn_id: i + 1, chunk_index: 0 }));
const turns = texts.map((_, i) => turn(i + 1, 'completed', (i + 1) * 1000, (i + 1) * 1000 + 500));

/** Exchanges a and b in session 1, compressed into session 2, where c and d follow the summary and `kept` copies of session 1's messages. */
function compressed(parent: StoredMessage[], kept: StoredMessage[], summarised: StoredMessage[], options: { extraSessions?: StoredSession[] } = {}) {
  const child = [summary, ...kept.map((m, i) => ({ ...m, seq: i + 2 })), ...exchange(3, 'c', kept.length + 2), ...exchange(4, 'd', kept.length + 4)];
  const sessions = [session(1, null, 'compressed', parent), session(2, 1, 'active', child), ...(options.extraSessions ?? [])];
  const messages = sessions.flatMap((s) => s.messages);
  return snapshot(messages, { sessions, currentSessionId: 2, events, outbox, turns, summaries: [summariserRequest(summarised)] });
}

const sessionOne = [...exchange(1, 'a', 1), ...exchange(2, 'b', 3)];

describe(sessionChain.name, () => {
  it('holds what each summary covered, then the child', () => {
    const chain = sessionChain(compressed(sessionOne, sessionOne.slice(2), sessionOne.slice(0, 2)));
    expect(chain.view.map((m) => m.content)).toEqual(['a', 'echo: a', summary.content, 'b', 'echo: b', 'c', 'echo: c', 'd', 'echo: d']);
    expect(chain).toMatchObject({ lost: [], problems: [] });
  });
});

describe(checkUserMessages.name, () => {
  it('passes a chain whose summary covered the whole parent, or its first part with the rest kept', () => {
    expect(checkUserMessages(compressed(sessionOne, [], sessionOne))).toEqual([]);
    expect(checkUserMessages(compressed(sessionOne, sessionOne.slice(2), sessionOne.slice(0, 2)))).toEqual([]);
  });

  it('flags an exchange committed to the parent after its compression read it, in neither the summary nor the kept messages (issue 29, defect 1)', () => {
    // The summariser was given exchange a only; exchange b was committed meanwhile, and the child kept nothing.
    const problems = checkUserMessages(compressed(sessionOne, [], sessionOne.slice(0, 2)));
    expect(problems).toEqual([
      expect.stringContaining('user message s1/3 of turn 2 "b" is not in the current chain: session 1 holds it after the 2 messages its compression read'),
      expect.stringContaining('assistant message s1/4 of turn 2 "echo: b" is not in the current chain'),
      expect.stringContaining('the current chain\'s user messages differ from accepted input'),
      expect.stringContaining("turn 2's reply, which the user received, is not in the current chain"),
    ]);
  });

  it('flags an exchange after the kept messages the child copied', () => {
    // The compression read a and b, kept b; then exchange e landed in session 1 (turn 5, event 5).
    const late = exchange(5, 'e', 5);
    const snap = compressed([...sessionOne, ...late], sessionOne.slice(2), sessionOne.slice(0, 2));
    const withE = { ...snap, events: [...snap.events, { id: 5, text: 'e', status: 'done' as const, turn_id: 5, received_at: at(5000) }] };
    expect(checkUserMessages(withE)).toContainEqual(expect.stringContaining('user message s1/5 of turn 5 "e" is not in the current chain'));
  });

  it('flags a summary no summariser request was given, and a session outside the chain unless a reset ended it', () => {
    const unsummarised = { ...compressed(sessionOne, [], sessionOne), summaries: [] };
    expect(checkUserMessages(unsummarised)).toEqual([expect.stringContaining('no summariser request was given a part of session 1')]);
    const stray = session(3, null, 'active', [stored(1, 9, 'user', 'z', { inbound_event_id: 9 })]);
    expect(checkUserMessages(compressed(sessionOne, [], sessionOne, { extraSessions: [stray] }))).toEqual([
      expect.stringContaining('session 3 (active) is not in the current chain and was not ended by a reset'),
    ]);
    const reset = compressed(sessionOne, [], sessionOne, { extraSessions: [{ ...stray, status: 'finalized' }] });
    expect(checkUserMessages({ ...reset, events: [...reset.events, { id: 9, text: 'z', status: 'done', turn_id: 9, received_at: at(0) }] })).toEqual([]);
  });

  it('flags a reply the user received that is no stored answer of its turn', () => {
    const snap = compressed(sessionOne, [], sessionOne);
    expect(checkUserMessages({ ...snap, outbox: snap.outbox.map((o) => (o.turn_id === 3 ? { ...o, text: 'something else' } : o)) })).toEqual([
      expect.stringContaining("turn 3's reply \"somethingelse\" is no stored answer of that turn"),
    ]);
  });
});
