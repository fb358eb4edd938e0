import { findToolTail } from '@switchboard/core';
import { sessionChain } from './turn-chain.ts';
import { apiOnlyMarker, lastUserText, recoveryNoteIndexes, type ChatMessage, type ChatSnapshot, type ModelRequest, type StoredMessage, type StoredTurn } from './turn-helpers.ts';

/**
 * d) Each unread tool tail's recovery note is accepted by the model exactly
 * once (docs/turns.md "The recovery note"; issue 16, defect 3; issue 29).
 * The worker stores the acknowledgement (`recovery_ack_key`) as soon as it
 * reads the answer's headers, for a turn whose row was written. A request
 * carrying the note (a carrier) is:
 * - not accepted, when the model never answered it;
 * - accepted, when its turn went on with the answer: the turn stored an
 *   answer or completed, or a later request of the turn shows the answer (a
 *   follow-up: the worker read it, even in a turn that then lost its lease);
 * - uncertain otherwise: the sim's record that it answered does not show the
 *   worker read it. SEED=1212, chat 30069: request 190 was answered and
 *   finished by the sim in 8 ms, its turn was interrupted with nothing kept,
 *   and the same worker's next turn, reading the session after that commit,
 *   carried the note again: the answer was never read (the sim also records
 *   requests seconds late under load, so a finished answer can be written
 *   into a connection the worker has already left). So, too, when its turn
 *   was cut off or it left no turn row (SEED=4180936010: SIGKILL between the
 *   answer and the running-turn insert).
 *
 * What fails: a second note for a tail after an accepted carrier (a repeat);
 * a turn starting over a tail without the note while the last carrier was
 * never answered, or none was (an omission); a follow-up of a turn carrying
 * it; and a stored acknowledgement the requests contradict (checkStoredAck),
 * which settles what the uncertain carriers leave open.
 *
 * A request "starts a turn" when everything after its history is new user
 * input. `requests` are the chat's requests in arrival order; the stored
 * transcript tells a turn-start over an old tail (the tail and the new input
 * belong to different turns) from a steer follow-up (same turn).
 */
export function checkRecoveryNotes(snapshot: ChatSnapshot, requests: ModelRequest[]): string[] {
  const ctx = noteContext(snapshot, requests);
  const problems: string[] = [];
  for (const request of inTurnOrder(ctx, requests)) {
    const notes = recoveryNoteIndexes(request);
    if (notes.length > 1) problems.push(`request ${request.id} carries ${notes.length} recovery notes`);
    const note = notes[0];
    const problem = note === undefined ? checkTurnStartWithoutNote(ctx, request) : checkCarrier(ctx, request, note);
    if (problem) problems.push(problem);
  }
  return [...problems, ...checkStoredAck(ctx, snapshot, requests)];
}

/**
 * Slack between the sim's clock (request times) and Postgres's now() (turn
 * times), as in turn-fault-invariants.ts: a turn's row is inserted beside its
 * first model request.
 */
const clockSlackMs = 250;

type Fate = 'no' | 'yes' | 'uncertain';

interface Carrier {
  request: ModelRequest;
  fate: Fate;
  /** Why it was judged so, for a problem line. */
  why: string;
}

/** An unread tool tail of the chain: its tool messages were never followed by an answer of their own turn. */
interface Tail {
  /** Its tool_call_ids, joined: how a request shows it. */
  ids: string;
  /** findToolTail's key, as `recovery_ack_key` stores it. */
  key: string;
  /** The turn that answered next (it read the tail, with the note or without); undefined if none, or a summary came first. */
  reader: number | null | undefined;
}

interface NoteContext {
  snapshot: ChatSnapshot;
  requests: ModelRequest[];
  /** Tail ids → the requests carrying its note, in turn order, each judged. */
  carriers: Map<string, Carrier[]>;
  turnOfToolCall: Map<string, number | null>;
  turnOfUserText: Map<string, number | null>;
  /** Turns that went on with the model's answer: stored an assistant entry, or completed. */
  usedTurns: Set<number | null>;
  /** The unread tails of the current chain, in order. */
  tails: Tail[];
  /** The acknowledgements the chain's sessions store (a session keeps its own when compression ends it). */
  chainAcks: string[];
}

function noteContext(snapshot: ChatSnapshot, requests: ModelRequest[]): NoteContext {
  const chain = sessionChain(snapshot);
  return {
    snapshot,
    requests,
    carriers: new Map(),
    turnOfToolCall: new Map(snapshot.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id ?? '', m.turn_id])),
    turnOfUserText: new Map(snapshot.messages.filter((m) => m.role === 'user').map((m) => [m.content, m.turn_id])),
    usedTurns: new Set([...snapshot.messages.filter((m) => m.role === 'assistant').map((m) => m.turn_id), ...snapshot.turns.filter((t) => t.status === 'completed').map((t) => t.id)]),
    tails: unreadTails(chain.view),
    chainAcks: [...chain.links.flatMap((s) => (s.recovery_ack_key === null ? [] : [s.recovery_ack_key])), ...(snapshot.recoveryAckKey ? [snapshot.recoveryAckKey] : [])],
  };
}

/** The chain's tool runs that no answer of their own turn followed (findToolTail's tails, as each later turn met them). */
function unreadTails(view: StoredMessage[]): Tail[] {
  const tails: Tail[] = [];
  for (let i = 1; i < view.length; i++) {
    const opener = view[i - 1]!;
    if (view[i]!.role !== 'tool' || opener.role !== 'assistant' || !opener.tool_calls?.length) continue;
    let end = i;
    while (view[end]?.role === 'tool') end++;
    let next = end;
    while (view[next]?.role === 'user') next++;
    const after = view[next];
    // Read by a follow-up of its own turn (after any steer input): not a tail.
    if (after && after.kind !== 'summary' && after.turn_id === view[end - 1]!.turn_id) continue;
    const tools = view.slice(i, end);
    const tail = findToolTail([
      { role: 'assistant', content: opener.content, toolCalls: opener.tool_calls },
      ...tools.map((m) => ({ role: 'tool' as const, content: m.content, toolCallId: m.tool_call_id, toolName: m.tool_name })),
    ]);
    tails.push({ ids: tools.map((m) => m.tool_call_id ?? '').join(','), key: tail?.key ?? '', reader: after?.kind === 'summary' ? undefined : after?.turn_id });
  }
  return tails;
}

/**
 * The tool_call_ids of the tool tail a request shows before `index`: the run
 * of tool messages there, past any user input of turns that never reached the
 * model (findToolTail, docs/turns.md), opened by an assistant message with tool calls.
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
 * The requests in the order their turns began (Postgres turn ids), then as
 * the sim numbered them. The sim runs in the busy test process and may take
 * in two requests of one chat in the other order than they were sent (an
 * aborted request's body read late), so its numbering alone can put a turn's
 * request after the next turn's. A request whose input is not stored keeps
 * its place by number.
 */
function inTurnOrder(ctx: NoteContext, requests: ModelRequest[]): ModelRequest[] {
  const turnOf = (request: ModelRequest) => ctx.turnOfUserText.get(lastUserText(request)) ?? Number.POSITIVE_INFINITY;
  const keyed = requests.map((request, index) => ({ request, index, turn: turnOf(request) }));
  let previous = Number.NEGATIVE_INFINITY;
  // A request of an unstored turn takes the turn of the request before it, so it is not moved.
  for (const entry of keyed) {
    if (entry.turn === Number.POSITIVE_INFINITY) entry.turn = previous;
    else previous = entry.turn;
  }
  return keyed.sort((a, b) => a.turn - b.turn || a.index - b.index).map((entry) => entry.request);
}

/** A request carrying the note at `note`: at a turn's start, never after an accepted carrier; records how it fared. */
function checkCarrier(ctx: NoteContext, request: ModelRequest, note: number): string | undefined {
  const messages = request.body.messages;
  const key = tailBefore(messages, note).join(',');
  if (key === '') return `request ${request.id} carries the recovery note with no tool tail before it`;
  // Only new input (and the resume note, which follows the recovery note) may come after a turn start's note.
  if (!messages.slice(note + 1).every((m) => m.role === 'user' || m.role === 'system')) {
    return `request ${request.id} is a follow-up of its turn and carries the recovery note again`;
  }
  const carriers = ctx.carriers.get(key) ?? [];
  const accepted = carriers.find((c) => c.fate === 'yes');
  const turn = ctx.turnOfUserText.get(messages.slice(note + 1).find((m) => m.role === 'user')?.content ?? '');
  ctx.carriers.set(key, [...carriers, judgeCarrier(ctx, request, turn)]);
  if (accepted) return `request ${request.id} carries the recovery note for tail [${key}] again, after request ${accepted.request.id} carrying it was accepted (${accepted.why})`;
  return undefined;
}

/**
 * Whether the worker surely read the model's answer to `request`, and so
 * stored the acknowledgement (see checkRecoveryNotes).
 */
function judgeCarrier(ctx: NoteContext, request: ModelRequest, inputTurn: number | null | undefined): Carrier {
  const judged = (fate: Fate, why: string): Carrier => ({ request, fate, why });
  if (request.respondedAt === undefined) return judged('no', 'the model never answered it');
  const owner = ownerTurn(ctx.snapshot, request.receivedAt);
  if (owner && owner.id === inputTurn && ctx.usedTurns.has(owner.id)) return judged('yes', `its turn ${owner.id} went on with the answer`);
  // Of the same turn: a later turn's request can show the same messages and then the answer another carrier got
  // (SEED=2665547422 batch 1, chat 30011: a cut-off carrier, then the next turn's).
  const followUp = ctx.requests.find((r) => r.id !== request.id && ownerTurn(ctx.snapshot, r.receivedAt)?.id === owner?.id && continuesAfterAnswer(request, r));
  if (followUp) return judged('yes', `its turn went on with the answer in request ${followUp.id}`);
  if (!owner) return judged('uncertain', 'no turn row existed when it was made (its worker may have died before writing it)');
  if (owner.error === 'cut_off_by_restart') return judged('uncertain', `its turn ${owner.id} was cut off by a restart`);
  return judged('uncertain', `its turn ${owner.id} ended ${owner.status}${owner.error ? `/${owner.error}` : ''} with nothing of the answer kept`);
}

/** Whether `later` is a follow-up of `request`'s turn: its messages (API-only notes left out, as after the first request) then the model's answer. */
function continuesAfterAnswer(request: ModelRequest, later: ModelRequest): boolean {
  const shown = (m: ChatMessage) => JSON.stringify([m.role, m.content, m.tool_call_id ?? null]);
  const sent = request.body.messages.filter((m) => !(m.role === 'system' && (m.content ?? '').startsWith(apiOnlyMarker))).map(shown);
  const next = later.body.messages;
  return next.length > sent.length && next[sent.length]?.role === 'assistant' && sent.every((m, i) => m === shown(next[i]!));
}

/**
 * The turn running when the sim got the request: one whose span holds it;
 * else one begun just after (its row is written beside its first request);
 * else one ended just before (the sim records a request late under load).
 */
function ownerTurn(snapshot: ChatSnapshot, at: number): StoredTurn | undefined {
  const start = (t: StoredTurn) => t.started_at.getTime();
  const end = (t: StoredTurn) => t.ended_at?.getTime() ?? Number.POSITIVE_INFINITY;
  const turns = [...snapshot.turns].sort((a, b) => start(a) - start(b) || a.id - b.id);
  return (
    turns.filter((t) => start(t) <= at && at <= end(t)).at(-1) ??
    turns.find((t) => at < start(t) && start(t) - clockSlackMs <= at) ??
    turns.filter((t) => end(t) < at && at <= end(t) + clockSlackMs).at(-1)
  );
}

/**
 * A request that starts a turn over a tool tail, without the note: the tail
 * right before its new input (the trailing run of user messages stored by
 * one turn), and the turn that stored that input. Undefined for anything
 * else (no tail there, no new input, or a steer follow-up of the tail's own turn).
 */
function turnStartWithoutNote(ctx: NoteContext, request: ModelRequest): { tail: string[]; inputTurn: number | null | undefined; tailTurn: number | null | undefined } | undefined {
  const messages = request.body.messages;
  let firstNew = messages.length;
  const lastTurn = ctx.turnOfUserText.get(messages.at(-1)?.content ?? '');
  while (firstNew > 0 && messages[firstNew - 1]?.role === 'user' && ctx.turnOfUserText.get(messages[firstNew - 1]?.content ?? '') === lastTurn) firstNew--;
  let historyEnd = firstNew;
  while (historyEnd > 1 && messages[historyEnd - 1]?.role === 'system') historyEnd--;
  const tail = tailBefore(messages, historyEnd);
  if (tail.length === 0 || firstNew === messages.length) return undefined;
  return { tail, tailTurn: ctx.turnOfToolCall.get(tail.at(-1) ?? ''), inputTurn: ctx.turnOfUserText.get(messages[firstNew]?.content ?? '') };
}

/** A request without the note: is it a turn starting over a tool tail whose note was never accepted? */
function checkTurnStartWithoutNote(ctx: NoteContext, request: ModelRequest): string | undefined {
  const start = turnStartWithoutNote(ctx, request);
  if (!start) return undefined;
  const { tail, tailTurn, inputTurn } = start;
  if (tailTurn === undefined || inputTurn === undefined) {
    // A follow-up of a turn that committed nothing (cut off, or superseded while its tool ran) shows its own unstored tool calls.
    const uncommitted = ctx.snapshot.turns.filter((t) => t.error === 'cut_off_by_restart' || t.error === 'lease_lost');
    if (uncommitted.some((t) => t.started_at.getTime() <= request.receivedAt + clockSlackMs)) return undefined;
    return `request ${request.id}: its tool tail or new input is not in the stored transcript`;
  }
  // Owed again after a carrier the model never answered; an uncertain one may have been acknowledged.
  const latest = ctx.carriers.get(tail.join(','))?.at(-1);
  if (tailTurn !== inputTurn && (latest?.fate ?? 'no') === 'no') {
    return `request ${request.id} starts a turn over the unread tool tail [${tail.join(',')}] without the recovery note${latest ? ` (request ${latest.request.id} carried it, but ${latest.why})` : ', which no request ever carried'}`;
  }
  return undefined;
}

/**
 * The stored acknowledgement agrees with the requests (docs/turns.md "The
 * recovery note"): each key a session of the chain stores is a tail's whose
 * note some request the model answered carried; the current one is not
 * behind any tail a committed turn read (a request of that turn showed the
 * tail and the turn went on: the key was then that tail's, whether this
 * request carried the note or an earlier one had); and if it is a tail's,
 * that tail's last carrier was answered (it stored it: a carrier after the
 * one that stored it carried the note after it was acknowledged).
 */
function checkStoredAck(ctx: NoteContext, snapshot: ChatSnapshot, requests: ModelRequest[]): string[] {
  const problems: string[] = [];
  const answered = (tail: Tail) => (ctx.carriers.get(tail.ids) ?? []).filter((c) => c.fate !== 'no');
  for (const key of new Set(ctx.chainAcks)) {
    const tail = ctx.tails.find((t) => t.key === key);
    if (!tail) problems.push(`a session stores the recovery acknowledgement ${key.slice(0, 12)}…, the key of no unread tool tail of the chain`);
    else if (answered(tail).length === 0) problems.push(`a session stores the acknowledgement of tail [${tail.ids}], but no request carrying its note was answered`);
  }
  const ackAt = ctx.tails.findIndex((t) => t.key === snapshot.recoveryAckKey);
  const read = ctx.tails.map((tail, index) => ({ tail, index, by: readingRequest(ctx, tail, requests) })).filter((r) => r.by !== undefined);
  const behind = read.filter((r) => r.index > ackAt).at(-1);
  if (behind) {
    const stored = ackAt < 0 ? 'none' : `tail [${ctx.tails[ackAt]!.ids}]'s`;
    problems.push(`turn ${behind.tail.reader} read tail [${behind.tail.ids}] (request ${behind.by!.id}), so its note was accepted, yet the stored acknowledgement is ${stored}`);
  }
  const acked = ctx.tails[ackAt];
  const last = acked ? ctx.carriers.get(acked.ids)?.at(-1) : undefined;
  if (acked && last?.fate === 'no' && answered(acked).length > 0) {
    problems.push(`request ${last.request.id} carries the note for tail [${acked.ids}] after its acknowledgement was stored (only requests ${answered(acked).map((c) => c.request.id).join(', ')} the model answered can have stored it)`);
  }
  return problems;
}

/** A request of the tail's reader, answered, that showed the tail at its start (undefined if none did: summarised or trimmed). */
function readingRequest(ctx: NoteContext, tail: Tail, requests: ModelRequest[]): ModelRequest | undefined {
  const reader = ctx.snapshot.turns.find((t) => t.id === tail.reader);
  if (!reader || !ctx.usedTurns.has(reader.id)) return undefined;
  const within = (r: ModelRequest) => reader.started_at.getTime() - clockSlackMs <= r.receivedAt && r.receivedAt <= (reader.ended_at?.getTime() ?? Number.POSITIVE_INFINITY) + clockSlackMs;
  return requests.find((r) => {
    if (r.respondedAt === undefined || !within(r)) return false;
    const note = recoveryNoteIndexes(r)[0];
    if (note !== undefined) return tailBefore(r.body.messages, note).join(',') === tail.ids && ctx.turnOfUserText.get(r.body.messages.slice(note + 1).find((m) => m.role === 'user')?.content ?? '') === reader.id;
    const start = turnStartWithoutNote(ctx, r);
    return start?.tail.join(',') === tail.ids && start.inputTurn === reader.id;
  });
}
