import { parseChatCommand } from '@switchboard/core';
import type { SentTelegramMessage } from './system.ts';
import { apiOnlyMarker, recoveryNoteIndexes, type ChatSnapshot, type ModelRequest } from './turn-helpers.ts';

/**
 * The invariants every conversation must satisfy once it is idle, whatever
 * its busy mode and whatever interleaving of messages, tools and /stop it
 * went through (DESIGN §5–7). Each check returns human-readable violations,
 * empty when the invariant holds.
 */

/** Accepted user input: not a chat command, not refused over the queued-input cap. */
export function acceptedInput(snapshot: ChatSnapshot) {
  return snapshot.events.filter((e) => e.status !== 'refused' && parseChatCommand(e.text) === null);
}

/** a) One stored copy of each accepted user message, in arrival order, and every accepted event consumed. */
export function checkUserMessages(snapshot: ChatSnapshot): string[] {
  const problems: string[] = [];
  const accepted = acceptedInput(snapshot);
  const users = snapshot.messages.filter((m) => m.role === 'user');
  const expected = accepted.map((e) => `${e.id}:${e.text}`);
  const stored = users.map((m) => `${m.inbound_event_id}:${m.content}`);
  if (JSON.stringify(expected) !== JSON.stringify(stored)) {
    problems.push(`stored user messages differ from accepted input in arrival order:\n    accepted ${JSON.stringify(expected)}\n    stored   ${JSON.stringify(stored)}`);
  }
  for (const event of snapshot.events) {
    if (event.status === 'pending') problems.push(`inbound event ${event.id} ${JSON.stringify(event.text)} still pending`);
    if (event.status === 'refused' && parseChatCommand(event.text) !== null) problems.push(`command ${JSON.stringify(event.text)} was refused`);
  }
  return problems;
}

/** b) No API-only text in any stored message. */
export function checkNoApiOnlyText(snapshot: ChatSnapshot): string[] {
  return snapshot.messages
    .filter((m) => m.content.includes(apiOnlyMarker))
    .map((m) => `stored ${m.role} message seq ${m.seq} holds API-only text: ${JSON.stringify(m.content.slice(0, 120))}`);
}

/** c) At most one running turn at any moment: no turn left running, no overlapping [started_at, ended_at]. */
export function checkTurnsDoNotOverlap(snapshot: ChatSnapshot): string[] {
  const problems: string[] = [];
  const turns = [...snapshot.turns].sort((a, b) => a.started_at.getTime() - b.started_at.getTime() || a.id - b.id);
  for (const turn of turns) {
    if (turn.status === 'running' || turn.ended_at === null) problems.push(`turn ${turn.id} left ${turn.status}`);
    if (turn.error?.startsWith('cut_off')) problems.push(`turn ${turn.id} was cut off (${turn.error}): another turn started while it ran`);
  }
  for (let i = 1; i < turns.length; i++) {
    const previous = turns[i - 1]!;
    const turn = turns[i]!;
    if (previous.ended_at && turn.started_at.getTime() < previous.ended_at.getTime()) {
      problems.push(
        `turn ${turn.id} started at ${turn.started_at.toISOString()} before turn ${previous.id} ended at ${previous.ended_at.toISOString()}`,
      );
    }
  }
  return problems;
}

/**
 * The tool_call_ids of the tool tail a request shows before `index`: the run
 * of tool messages there, past any user input of turns that never reached the
 * model (findToolTail, DESIGN §7), opened by an assistant message with tool calls.
 */
function tailBefore(messages: ModelRequest['body']['messages'], index: number): string[] {
  let end = index;
  while (end > 0 && messages[end - 1]?.role === 'user') end--;
  const ids: string[] = [];
  let i = end - 1;
  for (; i >= 0 && messages[i]?.role === 'tool'; i--) ids.unshift(messages[i]?.tool_call_id ?? '');
  const opener = messages[i];
  return ids.length > 0 && opener?.role === 'assistant' && opener.tool_calls?.length ? ids : [];
}

/**
 * d) Each unread tool tail's recovery note is accepted by the model exactly
 * once (issue 16, defect 3). A carrier request is:
 * - accepted, when its turn went on with the answer (stored an assistant
 *   entry, or completed): no request may carry that note again;
 * - not accepted, when the model never answered (no headers written): the
 *   next turn over the tail must carry the note again;
 * - uncertain, when the model answered but its turn was stopped with nothing
 *   of the answer kept: whether the worker read the headers before it aborted
 *   is known only to the worker, so the next turn may carry the note or not.
 * A follow-up request of the same turn never carries the note.
 *
 * A request "starts a turn" when everything after its history is new user
 * input. `requests` are the chat's requests in arrival order; the stored
 * transcript tells a turn-start over an old tail (the tail and the new input
 * belong to different turns) from a steer follow-up (same turn).
 */
export function checkRecoveryNotes(snapshot: ChatSnapshot, requests: ModelRequest[]): string[] {
  const problems: string[] = [];
  /** Tail key → how the latest request carrying its note fared. */
  const carried = new Map<string, { request: number; accepted: 'yes' | 'no' | 'uncertain' }>();
  const turnOfToolCall = new Map(snapshot.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id ?? '', m.turn_id]));
  const turnOfUserText = new Map(snapshot.messages.filter((m) => m.role === 'user').map((m) => [m.content, m.turn_id]));
  const usedTurns = new Set([
    ...snapshot.messages.filter((m) => m.role === 'assistant').map((m) => m.turn_id),
    ...snapshot.turns.filter((t) => t.status === 'completed').map((t) => t.id),
  ]);
  for (const request of requests) {
    const messages = request.body.messages;
    const notes = recoveryNoteIndexes(request);
    if (notes.length > 1) problems.push(`request ${request.id} carries ${notes.length} recovery notes`);
    const note = notes[0];
    if (note !== undefined) {
      const key = tailBefore(messages, note).join(',');
      if (key === '') {
        problems.push(`request ${request.id} carries the recovery note with no tool tail before it`);
        continue;
      }
      if (!messages.slice(note + 1).every((m) => m.role === 'user')) {
        problems.push(`request ${request.id} is a follow-up of its turn and carries the recovery note again`);
        continue;
      }
      const earlier = carried.get(key);
      if (earlier?.accepted === 'yes') problems.push(`request ${request.id} carries the recovery note for tail [${key}] again, after request ${earlier.request} carrying it was accepted`);
      const turn = turnOfUserText.get(messages[note + 1]?.content ?? '');
      const accepted = request.respondedAt === undefined ? 'no' : turn !== undefined && usedTurns.has(turn) ? 'yes' : 'uncertain';
      carried.set(key, { request: request.id, accepted });
      continue;
    }
    // No note: is this a turn starting over a tool tail whose note was never accepted?
    // Its new input is the trailing run of user messages stored by one turn.
    let firstNew = messages.length;
    const lastTurn = turnOfUserText.get(messages.at(-1)?.content ?? '');
    while (firstNew > 0 && messages[firstNew - 1]?.role === 'user' && turnOfUserText.get(messages[firstNew - 1]?.content ?? '') === lastTurn) firstNew--;
    let historyEnd = firstNew;
    while (historyEnd > 1 && messages[historyEnd - 1]?.role === 'system') historyEnd--;
    const tail = tailBefore(messages, historyEnd);
    if (tail.length === 0 || firstNew === messages.length) continue;
    const tailTurn = turnOfToolCall.get(tail.at(-1) ?? '');
    const inputTurn = turnOfUserText.get(messages[firstNew]?.content ?? '');
    if (tailTurn === undefined || inputTurn === undefined) {
      problems.push(`request ${request.id}: its tool tail or new input is not in the stored transcript`);
      continue;
    }
    const state = carried.get(tail.join(','))?.accepted ?? 'no';
    if (tailTurn !== inputTurn && state === 'no') {
      problems.push(`request ${request.id} starts a turn over the unread tool tail [${tail.join(',')}] without the recovery note`);
    }
  }
  return problems;
}

/** e) Idle: no pending input, no pending or failed outbox row. */
export function checkIdle(snapshot: ChatSnapshot): string[] {
  const problems: string[] = [];
  const pending = snapshot.events.filter((e) => e.status === 'pending');
  if (pending.length > 0) problems.push(`${pending.length} inbound events still pending`);
  for (const row of snapshot.outbox) if (row.status !== 'sent') problems.push(`outbox row ${row.id} is ${row.status}`);
  return problems;
}

/** f) What the user saw is the outbox, in order, each row once. */
export function checkDelivered(snapshot: ChatSnapshot, sent: SentTelegramMessage[]): string[] {
  const expected = snapshot.outbox.map((o) => o.text);
  const seen = sent.map((s) => s.text);
  return JSON.stringify(expected) === JSON.stringify(seen) ? [] : [`the user saw ${JSON.stringify(seen)} but the outbox holds ${JSON.stringify(expected)}`];
}

export function checkAll(
  snapshot: ChatSnapshot,
  requests: ModelRequest[],
  sent: SentTelegramMessage[],
  options: { knownStopRace?: { surplusStopped: number } } = {},
): string[] {
  return [
    ...checkUserMessages(snapshot).map((p) => `(a) ${p}`),
    ...checkNoApiOnlyText(snapshot).map((p) => `(b) ${p}`),
    ...checkTurnsDoNotOverlap(snapshot).map((p) => `(c) ${p}`),
    ...checkRecoveryNotes(snapshot, requests).map((p) => `(d) ${p}`),
    ...checkIdle(snapshot).map((p) => `(e) ${p}`),
    ...checkDelivered(snapshot, sent).map((p) => `(f) ${p}`),
    ...checkStopReplies(snapshot, options).map((p) => `(g) ${p}`),
  ];
}

/**
 * For every completed turn, in order, the echo model's reply to the last
 * user message of that turn: what the user must see (besides command
 * replies and notices) when every reply comes from the echo default.
 */
export function expectedEchoReplies(snapshot: ChatSnapshot, prefix = 'echo: '): string[] {
  return snapshot.turns
    .filter((t) => t.status === 'completed')
    .map((t) => {
      const last = snapshot.messages.filter((m) => m.turn_id === t.id && m.role === 'user').at(-1);
      return `${prefix}${last?.content ?? '?'}`;
    });
}

/**
 * g) Each /stop is answered: "Stopped." once per turn it cancelled, "Nothing
 * was running." otherwise. `knownStopRace` tolerates (and counts in
 * `surplusStopped`) extra "Stopped." replies: the product bug where a stop
 * signal that lands after the model finished but before the commit makes
 * /stop say "Stopped." for a turn that completed (reproduced
 * deterministically in busy-modes.e2e.test.ts).
 */
export function checkStopReplies(snapshot: ChatSnapshot, options: { knownStopRace?: { surplusStopped: number } } = {}): string[] {
  const stops = snapshot.events.filter((e) => parseChatCommand(e.text)?.name === 'stop').length;
  const stopped = snapshot.outbox.filter((o) => o.text === 'Stopped.').length;
  const nothing = snapshot.outbox.filter((o) => o.text === 'Nothing was running.').length;
  const cancelled = snapshot.turns.filter((t) => t.status === 'cancelled').length;
  const problems: string[] = [];
  if (stopped + nothing !== stops) problems.push(`${stops} /stop commands but ${stopped} "Stopped." and ${nothing} "Nothing was running." replies`);
  if (stopped < cancelled || (stopped > cancelled && !options.knownStopRace)) problems.push(`${cancelled} cancelled turns but ${stopped} "Stopped." replies`);
  else if (stopped > cancelled && options.knownStopRace) options.knownStopRace.surplusStopped += stopped - cancelled;
  return problems;
}

/** A compact dump of one chat (transcript, turns, model requests), appended to a failure so it can be diagnosed from the log alone. */
export function describeChat(snapshot: ChatSnapshot, requests: ModelRequest[]): string {
  const clip = (text: string | null | undefined) => JSON.stringify((text ?? '').slice(0, 48));
  const lines = [
    `  events: ${snapshot.events.map((e) => `#${e.id} ${e.status} t${e.turn_id ?? '-'} ${clip(e.text)}`).join(' | ')}`,
    `  turns: ${snapshot.turns.map((t) => `t${t.id} ${t.status}${t.error ? `(${t.error})` : ''}`).join(', ')}`,
    '  transcript:',
    ...snapshot.messages.map(
      (m) =>
        `    ${m.seq} t${m.turn_id ?? '-'} ${m.role}${m.tool_calls?.length ? ` calls[${m.tool_calls.map((c) => `${c.name}:${c.id}`).join(',')}]` : ''}${m.tool_call_id ? ` (${m.tool_call_id})` : ''} ${clip(m.content)}`,
    ),
    '  requests:',
    ...requests.map((r) => {
      const shape = r.body.messages
        .map((m) => (m.role === 'system' ? ((m.content ?? '').startsWith('Note from') ? 'NOTE' : 'sys') : m.role === 'tool' ? `tool(${m.tool_call_id})` : m.role))
        .join(' ');
      const end = r.abortedAt !== undefined ? `aborted +${r.abortedAt - r.receivedAt}ms` : r.finishedAt !== undefined ? 'finished' : 'open';
      return `    #${r.id} ${end}: ${shape}`;
    }),
  ];
  return lines.join('\n');
}
