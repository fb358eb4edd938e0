import { parseChatCommand, streamStoppedMarker } from '@switchboard/core';
import { resumeNotePrefix } from './restart-helpers.ts';
import type { ChatSnapshot, ModelRequest, StoredOutbox, StoredTurn } from './turn-helpers.ts';

/**
 * The invariants that faults put to the test (issue 16): restarts, lease
 * loss and the queued-input cap. Each check returns human-readable
 * violations, empty when it holds; `faults` says what the scenario injected
 * into the conversation, so an effect without its cause is a violation.
 */

export interface InjectedFaults {
  /** A worker process was stopped or killed while the conversation's batch played. */
  restarts: boolean;
  /** One of them was killed (SIGKILL). */
  kills: boolean;
  /** The conversation's lease key was deleted mid-way, or a worker was stalled past WORKER_DEAD_AFTER_MS. */
  leaseLoss: boolean;
  /** A worker was stalled (SIGSTOP) past WORKER_DEAD_AFTER_MS, then resumed. */
  stalls?: boolean;
  /** The gateway's MAX_QUEUED_INPUT. */
  maxQueuedInput: number;
}

/**
 * Slack between the sim's clock (request times) and Postgres's now() (turn
 * times): one host, but a statement's now() is its transaction's start, and
 * a turn's row is inserted alongside its first model request (docs/turns.md).
 */
const clockSlackMs = 250;

/** The growing message of a turn that ended without an answer, finished with the marker. */
const isStoppedStream = (o: StoredOutbox) => o.streamed === true && o.text.endsWith(streamStoppedMarker.trim());
const isCutOff = (t: StoredTurn) => t.error === 'cut_off_by_restart' || (t.cut_off_at ?? null) !== null;
const isSuperseded = (t: StoredTurn) => t.error === 'lease_lost';
const requestEnd = (r: ModelRequest) => r.finishedAt ?? r.abortedAt ?? Number.POSITIVE_INFINITY;

/**
 * h) The resume note (docs/restarts.md "Resume once"): at most one per
 * request, only at a turn's start (never in a follow-up), and each carrier
 * answers its own cut-off turn, the latest one before it: none without a
 * cut-off, never a second one for a cut-off after a carrier was accepted
 * (one the model never answered owes it again).
 */
export function checkResumeNotes(snapshot: ChatSnapshot, requests: ModelRequest[]): string[] {
  const problems: string[] = [];
  const cutOffs = snapshot.turns.filter(isCutOff).sort((a, b) => (a.ended_at?.getTime() ?? 0) - (b.ended_at?.getTime() ?? 0));
  const answered = new Map<number, { request: number; accepted: boolean }>();
  for (const request of requests) {
    const messages = request.body.messages;
    const notes = messages.flatMap((m, i) => (m.role === 'system' && (m.content ?? '').startsWith(resumeNotePrefix) ? [i] : []));
    if (notes.length === 0) continue;
    if (notes.length > 1) problems.push(`request ${request.id} carries ${notes.length} resume notes`);
    if (!messages.slice((notes[0] ?? 0) + 1).every((m) => m.role === 'user' || m.role === 'system')) {
      problems.push(`request ${request.id} is a follow-up of its turn and carries the resume note`);
    }
    const cutOff = cutOffs.filter((t) => (t.ended_at?.getTime() ?? Infinity) <= request.receivedAt + clockSlackMs).at(-1);
    if (!cutOff) {
      problems.push(`request ${request.id} carries the resume note, but no turn was cut off before it`);
      continue;
    }
    // The note is owed until a carrier is accepted (docs/restarts.md, "Resume once"): a carrier the model never answered owes it again.
    const earlier = answered.get(cutOff.id);
    // A repeat the model never answered (aborted at once: a holding that lost the lease read the note as owed just before
    // the carrier's acceptance cleared it, and its turn never began; SEED=808) reached no one: only an answered one counts.
    if (earlier?.accepted && request.respondedAt !== undefined) problems.push(`request ${request.id} carries a second resume note for cut-off turn ${cutOff.id} (request ${earlier.request} carried the first and was accepted)`);
    answered.set(cutOff.id, { request: request.id, accepted: surelyAccepted(snapshot, request) });
  }
  return problems;
}

/**
 * Whether the worker surely accepted a request (onModelAccepted ran, which
 * clears the owed note): the model answered it, nothing aborted it, and the
 * turn that stored its last user message completed. The sim answering is not
 * enough: a turn interrupted right after the answer was written may never
 * have read it (seen: SEED=610541110), and then the note is rightly owed again.
 */
function surelyAccepted(snapshot: ChatSnapshot, request: ModelRequest): boolean {
  if (request.respondedAt === undefined || request.abortedAt !== undefined) return false;
  const lastUser = [...request.body.messages].reverse().find((m) => m.role === 'user')?.content;
  const event = snapshot.events.find((e) => e.text === lastUser);
  const turn = snapshot.turns.find((t) => t.id === event?.turn_id);
  // The request's own turn, too: a superseded turn's request may be answered, but that turn commits nothing and
  // a later turn takes its input (seen: SEED=202, a lease lost mid `wait`), so the model never kept the note.
  const during = snapshot.turns.filter(
    (t) => t.started_at.getTime() - clockSlackMs <= request.receivedAt && request.receivedAt <= (t.ended_at?.getTime() ?? Infinity) + clockSlackMs,
  );
  // And a request no turn was running for (its holding's row was refused: SEED=1212) was answered into nothing.
  return turn?.status === 'completed' && during.length > 0 && during.every((t) => t.status === 'completed');
}

/**
 * i) One conversation never has two model requests in flight. A request is
 * in flight from its arrival at the model until the model finished it or
 * the client's abort reached it, but no longer than the turn that stored its
 * input: the sim runs in the test's own, busy process and sees a request,
 * and an abort, up to seconds late under load (measured: a request recorded
 * 2 s after its turn had ended), while the worker's turn ends (commits) only
 * after its request finished or was aborted. A request the sim saw only
 * after its turn had ended was over for the worker before it was recorded.
 *
 * The only allowed overlap is a lease-loss window: the older request belongs
 * to a turn that a new holder superseded (`lease_lost`, started before it),
 * the newer one to the new holder's turn (after it settled the old turn), and
 * the superseded turn committed nothing (checkSupersededCommittedNothing).
 * With a stall in the batch, a turn cut off because its worker was declared
 * dead opens the same window: the frozen worker cannot abort its request,
 * which stays open until the worker resumes and exits (code 75), and the
 * cut-off turn commits nothing (checkEndedHoldingsCommittedNothing).
 */
export function checkOneRequestInFlight(snapshot: ChatSnapshot, requests: ModelRequest[], options: { stalls?: boolean } = {}): string[] {
  const problems: string[] = [];
  const superseded = snapshot.turns.filter((t) => isSuperseded(t) || (options.stalls === true && isCutOff(t)));
  const live = requests
    .map((r) => ({ r, end: Math.min(requestEnd(r), turnEndOf(snapshot, r), abortedOwnerEnd(snapshot, r)) }))
    .filter(({ r, end }) => r.receivedAt < end)
    .sort((a, b) => a.r.receivedAt - b.r.receivedAt || a.r.id - b.r.id);
  for (const [i, { r: request }] of live.entries()) {
    for (const { r: older, end } of live.slice(0, i)) {
      if (end <= request.receivedAt || abortedBeforeAnyTurn(snapshot, older)) continue;
      const window = superseded.find(
        (t) => t.started_at.getTime() <= older.receivedAt + clockSlackMs && (t.ended_at?.getTime() ?? Infinity) <= request.receivedAt + clockSlackMs,
      );
      if (!window) problems.push(`requests ${older.id} and ${request.id} were in flight at once, outside any lease-loss window`);
    }
  }
  return problems;
}

/**
 * An unanswered, aborted request most likely belongs to the last turn that
 * began before it and ended without committing (cut off, interrupted,
 * superseded): the turn that stores its input later is another one. The sim
 * can record such a request seconds late (SEED=1212: a cut-off turn's request
 * recorded 1.6 s after the turn had ended, while the next holder's request
 * ran), so its flight ends no later than that turn.
 */
function abortedOwnerEnd(snapshot: ChatSnapshot, request: ModelRequest): number {
  if (request.respondedAt !== undefined || request.abortedAt === undefined) return Number.POSITIVE_INFINITY;
  const owner = snapshot.turns
    .filter((t) => t.status !== 'completed' && t.status !== 'running' && t.started_at.getTime() <= request.receivedAt + clockSlackMs)
    .sort((a, b) => a.started_at.getTime() - b.started_at.getTime())
    .at(-1);
  return owner?.ended_at?.getTime() ?? Number.POSITIVE_INFINITY;
}

/**
 * A request the model never answered, aborted, sent while no turn of the
 * conversation was running: its holding's running-turn row was refused (the
 * row is written alongside the first request, docs/turns.md), so it aborted
 * the request and tried again. The sim, in the test's busy process, records
 * that abort late (SEED=1010: 228 ms, after the retry's request had arrived),
 * but the worker had ended it first, and it reached no one.
 */
function abortedBeforeAnyTurn(snapshot: ChatSnapshot, request: ModelRequest): boolean {
  if (request.respondedAt !== undefined || request.abortedAt === undefined) return false;
  return !snapshot.turns.some((t) => t.started_at.getTime() <= request.receivedAt && request.receivedAt <= (t.ended_at?.getTime() ?? Infinity));
}

/**
 * When the turn that stored the request's last user message ended. A request
 * of a turn that committed nothing maps to the later turn that stored that
 * input, so the bound is never earlier than the request's own turn's end.
 */
function turnEndOf(snapshot: ChatSnapshot, request: ModelRequest): number {
  const last = request.body.messages.filter((m) => m.role === 'user').at(-1)?.content;
  const turnId = snapshot.messages.find((m) => m.role === 'user' && m.content === last)?.turn_id;
  return snapshot.turns.find((t) => t.id === turnId)?.ended_at?.getTime() ?? Number.POSITIVE_INFINITY;
}

/** i') A superseded turn (a new holder took over, or its worker learned it lost the lease) committed nothing: no message, no reply, no input. */
export function checkSupersededCommittedNothing(snapshot: ChatSnapshot): string[] {
  return snapshot.turns.filter(isSuperseded).flatMap((t) => {
    const stored = snapshot.messages.filter((m) => m.turn_id === t.id).length;
    const sent = snapshot.outbox.filter((o) => o.turn_id === t.id).length;
    const taken = snapshot.events.filter((e) => e.turn_id === t.id).length;
    return stored + sent + taken > 0 ? [`superseded turn ${t.id} committed ${stored} messages, ${sent} outbox rows, ${taken} inbound events`] : [];
  });
}

/**
 * i'') A turn whose holding ended — cut off by a restart (its worker stopped,
 * killed, or stalled past WORKER_DEAD_AFTER_MS and declared dead), or
 * superseded — commits nothing afterwards, even if its worker runs on (a
 * stalled worker resumed by SIGCONT): a cut-off turn stored no message and
 * no reply, and no message the user sent was stored by two turns (two
 * committed answers to one message).
 */
export function checkEndedHoldingsCommittedNothing(snapshot: ChatSnapshot): string[] {
  const problems = snapshot.turns.filter(isCutOff).flatMap((t) => {
    const stored = snapshot.messages.filter((m) => m.turn_id === t.id).length;
    const sent = snapshot.outbox.filter((o) => o.turn_id === t.id && !isStoppedStream(o)).length;
    return stored + sent > 0 ? [`cut-off turn ${t.id} committed ${stored} messages, ${sent} outbox rows`] : [];
  });
  const storedBy = new Map<number, Set<number | null>>();
  for (const m of snapshot.messages) {
    if (m.role !== 'user' || m.inbound_event_id === null) continue;
    storedBy.set(m.inbound_event_id, (storedBy.get(m.inbound_event_id) ?? new Set()).add(m.turn_id));
  }
  for (const [event, turns] of storedBy) if (turns.size > 1) problems.push(`event ${event} was stored by ${turns.size} turns (${[...turns].join(', ')})`);
  return problems;
}

/**
 * j) Restarts and lease loss leave only their own marks: no turn both cut
 * off and completed; a cut-off turn is `failed`/`cut_off_by_restart` with
 * `cut_off_at`; cut-offs only where a worker was stopped or killed,
 * supersessions (`lease_lost`) only where a lease was lost.
 */
export function checkFaultMarks(snapshot: ChatSnapshot, faults: InjectedFaults): string[] {
  const problems: string[] = [];
  for (const t of snapshot.turns) {
    if (t.status === 'completed' && isCutOff(t)) problems.push(`turn ${t.id} is both cut off and completed`);
    if (isCutOff(t) && (t.status !== 'failed' || t.error !== 'cut_off_by_restart' || !t.cut_off_at)) {
      problems.push(`cut-off turn ${t.id} is ${t.status}/${t.error ?? '-'} (cut_off_at ${t.cut_off_at ? 'set' : 'unset'})`);
    }
    if (isCutOff(t) && !faults.restarts) problems.push(`turn ${t.id} was cut off, but no worker was stopped or killed`);
    if (isSuperseded(t) && (t.status !== 'interrupted' || t.cut_off_at)) problems.push(`superseded turn ${t.id} is ${t.status}${t.cut_off_at ? ', cut off' : ''}`);
    if (isSuperseded(t) && !faults.leaseLoss) problems.push(`turn ${t.id} was superseded (lease_lost), but the conversation never lost its lease`);
  }
  return problems;
}

/**
 * k) Every turn ends in exactly one reply or one notice, or — interrupted,
 * cancelled, cut off, superseded — none; every accepted message was taken by
 * one committed turn, which stored it; the last one was answered.
 */
export function checkTurnOutcomes(snapshot: ChatSnapshot): string[] {
  const problems: string[] = [];
  for (const t of snapshot.turns) {
    const rows = snapshot.outbox.filter((o) => o.turn_id === t.id && (o.chunk_index ?? 0) === 0);
    // A turn that streamed and then ended without an answer finishes its growing message with the marker
    // (docs/turns.md "Streaming replies", "Stopped."): that is what the user saw, not a reply.
    const stopped = rows.filter(isStoppedStream);
    const replies = rows.length - stopped.length;
    const wants = (t.status === 'completed' || t.status === 'failed') && !isCutOff(t) ? 1 : 0;
    if (replies !== wants) problems.push(`turn ${t.id} (${t.status}${t.error ? `/${t.error}` : ''}) sent ${replies} replies, wants ${wants}`);
    if (stopped.length > 1 || (stopped.length > 0 && t.status === 'completed')) {
      problems.push(`turn ${t.id} (${t.status}) ended ${stopped.length} streamed message(s) with the stopped marker`);
    }
  }
  const turns = new Map(snapshot.turns.map((t) => [t.id, t]));
  const accepted = snapshot.events.filter((e) => e.status !== 'refused' && parseChatCommand(e.text) === null);
  for (const e of accepted) {
    const turn = e.turn_id === null ? undefined : turns.get(e.turn_id);
    if (!turn || isCutOff(turn) || isSuperseded(turn)) {
      problems.push(`event ${e.id} was taken by ${turn ? `turn ${turn.id} (${turn.status}/${turn.error})` : 'no turn'}`);
    } else if (!snapshot.messages.some((m) => m.role === 'user' && m.inbound_event_id === e.id && m.turn_id === turn.id)) {
      problems.push(`event ${e.id} is marked taken by turn ${turn.id}, which did not store it`);
    }
  }
  const last = accepted.at(-1);
  const lastTurn = last?.turn_id === null || last === undefined ? undefined : turns.get(last.turn_id);
  if (last && lastTurn?.status !== 'completed') problems.push(`the last message (event ${last.id}) was not answered: its turn is ${lastTurn?.status ?? 'missing'}`);
  return problems;
}

/** l) At the end the conversation is active with its restart counter at 0 (fewer cut-offs than the threshold, then a completed reply). */
export function checkConversationEnd(snapshot: ChatSnapshot): string[] {
  const problems: string[] = [];
  if (snapshot.status !== undefined && snapshot.status !== 'active') problems.push(`the conversation ended ${snapshot.status}`);
  if (snapshot.restartCount !== undefined && snapshot.restartCount !== 0) problems.push(`the conversation ended with restart_count ${snapshot.restartCount}`);
  return problems;
}

/**
 * l) The restart counter, read while the conversation was idle before its
 * closing message, counts exactly the restarts since it was last cleared:
 * one per statement that cut off its running turn (the turns one statement
 * cut share their `cut_off_at`), after the last delivery of a completed
 * turn's reply (which clears it, docs/restarts.md). The closing message
 * clears it again, so without this reading an over-count would pass.
 */
export function checkRestartCount(snapshot: ChatSnapshot, idle: { restartCount: number; at: Date }): string[] {
  const at = idle.at.getTime();
  const completed = new Set(snapshot.turns.filter((t) => t.status === 'completed').map((t) => t.id));
  const cleared = Math.max(
    0,
    ...snapshot.outbox.filter((o) => o.turn_id !== null && completed.has(o.turn_id) && o.sent_at && o.sent_at.getTime() <= at).map((o) => o.sent_at!.getTime()),
  );
  const cuts = new Set(snapshot.turns.flatMap((t) => (t.cut_off_at && t.cut_off_at.getTime() > cleared && t.cut_off_at.getTime() <= at ? [t.cut_off_at.getTime()] : [])));
  if (idle.restartCount === cuts.size) return [];
  return [`restart_count was ${idle.restartCount} while idle, but ${cuts.size} restart(s) cut a turn off since a reply last cleared it`];
}

/**
 * m) Input is refused only with the cap really waiting: at least
 * MAX_QUEUED_INPUT earlier events still pending when it arrived. An earlier
 * event counts as pending unless the turn that took it committed before
 * (a command's event carries no turn, so it always counts: an upper bound).
 */
export function checkRefusals(snapshot: ChatSnapshot, maxQueuedInput: number): string[] {
  const turns = new Map(snapshot.turns.map((t) => [t.id, t]));
  return snapshot.events
    .filter((e) => e.status === 'refused' && parseChatCommand(e.text)?.name !== 'stop')
    .flatMap((e) => {
      const arrived = e.received_at.getTime();
      const waiting = snapshot.events.filter((o) => {
        if (o.id >= e.id || o.status === 'refused') return false;
        const taker = o.turn_id === null ? undefined : turns.get(o.turn_id);
        return !taker?.ended_at || taker.ended_at.getTime() > arrived - 50;
      }).length;
      return waiting >= maxQueuedInput ? [] : [`event ${e.id} was refused with at most ${waiting} events waiting (cap ${maxQueuedInput})`];
    });
}
