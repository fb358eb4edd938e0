import { describe, expect, it } from 'vitest';
import { resumeNotePrefix } from './restart-helpers.ts';
import { ackOf, at, calls, note, snapshot, stored, storedCalls, storedTool, sys, timed, tool, turn, user } from './turn-fixtures.ts';
import type { ChatMessage, ChatSnapshot } from './turn-helpers.ts';
import { checkRecoveryNotes } from './turn-note-invariants.ts';

// Check (d) must catch what it claims to: each case is a hand-made violation beside the good case.

const x = storedTool(3, 1, 'x');
/** Turn 1 asked for a tool and was interrupted; turn 2 took "b" and answered it. */
const head = [stored(1, 1, 'user', 'a'), storedCalls(2, 1, 'x'), x];
const readByTurnTwo = [...head, stored(4, 2, 'user', 'b'), stored(5, 2, 'assistant', 'echo: b')];
const interruptedThenAnswered = [turn(1, 'interrupted', 0, 100), turn(2, 'completed', 200, 400)];
/** The snapshot after turn 2 read the tail: the acknowledgement is tail x's unless `partial` says otherwise. */
const afterRead = (partial: Partial<ChatSnapshot> = {}) => snapshot(readByTurnTwo, { turns: interruptedThenAnswered, recoveryAckKey: ackOf(x), ...partial });
const overX = (...rest: ChatMessage[]) => [sys, user('a'), calls('x'), tool('x'), ...rest];

describe('checkRecoveryNotes', () => {
  describe('carriers', () => {
    it('accepts one note per tool tail; a follow-up of the same turn carries none', () => {
      const start = timed(210, 'finished', ...overX(note, user('b')));
      const followUp = timed(250, 'finished', ...overX(user('b'), calls('y'), tool('y')));
      expect(checkRecoveryNotes(afterRead(), [start, followUp])).toEqual([]);
    });

    it('flags a follow-up of the same turn that carries the note again', () => {
      const start = timed(210, 'finished', ...overX(note, user('b')));
      const followUp = timed(250, 'finished', ...overX(note, user('b'), calls('y'), tool('y')));
      expect(checkRecoveryNotes(afterRead(), [start, followUp])).toEqual([expect.stringContaining('follow-up of its turn and carries the recovery note again')]);
    });

    it('flags a second note for the same tail after the first was accepted', () => {
      const start = timed(210, 'finished', ...overX(note, user('b')));
      const again = timed(260, 'finished', ...overX(note, user('b')));
      expect(checkRecoveryNotes(afterRead(), [start, again])).toEqual([expect.stringContaining('again, after request')]);
    });

    it('judges requests in the order their turns began, whatever order the sim numbered them in', () => {
      // Turn 2 carried the note and was stopped before the answer; turn 3 carried it and went on. The sim took turn 2's request in last.
      const messages = [...head, stored(4, 2, 'user', 'b'), stored(5, 3, 'user', 'c'), stored(6, 3, 'assistant', 'echo: c')];
      const turns = [turn(1, 'interrupted', 0, 100), turn(2, 'interrupted', 200, 300), turn(3, 'completed', 400, 600)];
      const third = timed(410, 'finished', ...overX(user('b'), note, user('c')));
      const second = timed(210, 'unanswered', ...overX(note, user('b')));
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: ackOf(x) }), [third, second])).toEqual([]);
      // Turn 2 went on with the answer: the same pair, numbered the other way round, is a note sent again after it was accepted.
      const accepted = [...head, stored(4, 2, 'user', 'b'), stored(5, 2, 'assistant', 'part'), stored(6, 3, 'user', 'c')];
      const acceptedSecond = timed(210, 'finished', ...overX(note, user('b')));
      expect(checkRecoveryNotes(snapshot(accepted, { turns, recoveryAckKey: ackOf(x) }), [third, acceptedSecond])).toEqual([expect.stringContaining('again, after request')]);
    });

    it('a carrier answered while its turn was cut off is uncertain: the next turn may carry the note again, beside the resume note', () => {
      const turns = [turn(1, 'interrupted', 0, 100), turn(2, 'failed', 200, 900, { error: 'cut_off_by_restart', cut_off_at: at(900) }), turn(3, 'completed', 1000, 1100)];
      const messages = [...head, stored(4, 3, 'user', 'b'), stored(5, 3, 'assistant', 'echo: b')];
      const resumeNote: ChatMessage = { role: 'system', content: `${resumeNotePrefix} before it finished.` };
      const carrier = timed(250, 'aborted', ...overX(note, user('b')));
      const again = timed(1050, 'finished', ...overX(note, resumeNote, user('b')));
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: ackOf(x) }), [carrier, again])).toEqual([]);
    });

    it('a carrier of an attempt that left no turn row is uncertain (SEED=4180936010: SIGKILL between the answer and the running-turn insert)', () => {
      // Turn 3 stored "b"; a request carrying the note for "b" came before it, while no turn was running.
      const turns = [turn(1, 'interrupted', 0, 100), turn(3, 'completed', 1000, 1100)];
      const messages = [...head, stored(4, 3, 'user', 'b'), stored(5, 3, 'assistant', 'echo: b')];
      const early = timed(400, 'finished', ...overX(note, user('b')));
      const again = timed(1050, 'finished', ...overX(note, user('b')));
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: ackOf(x) }), [early, again])).toEqual([]);
      // Made inside turn 3, which went on with the answer, the same pair is a note sent again after it was accepted.
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: ackOf(x) }), [{ ...early, receivedAt: at(1010).getTime() }, again])).toEqual([
        expect.stringContaining('again, after request'),
      ]);
    });

    it("a later turn's request that shows the same messages and the next turn's answer is no follow-up (SEED=2665547422 batch 1, chat 30011)", () => {
      // Turn 2 carried the note and was cut off by a SIGKILL; turn 3 carried it again (with the resume note) and answered "b";
      // turn 4's request shows turn 2's messages, then turn 3's answer: it was not turn 2 going on with the answer.
      const turns = [turn(1, 'interrupted', 0, 100), turn(2, 'failed', 200, 900, { error: 'cut_off_by_restart', cut_off_at: at(900) }), turn(3, 'completed', 1000, 1100), turn(4, 'completed', 1200, 1300)];
      const messages = [...head, stored(4, 3, 'user', 'b'), stored(5, 3, 'assistant', 'echo: b'), stored(6, 4, 'user', 'c'), stored(7, 4, 'assistant', 'echo: c')];
      const resumeNote: ChatMessage = { role: 'system', content: `${resumeNotePrefix} before it finished.` };
      const cutOff = timed(250, 'finished', ...overX(note, user('b')));
      const again = timed(1050, 'finished', ...overX(note, resumeNote, user('b')));
      const nextTurn = timed(1250, 'finished', ...overX(user('b'), { role: 'assistant', content: 'echo: b' }, user('c')));
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: ackOf(x) }), [cutOff, again, nextTurn])).toEqual([]);
    });

    it('a carrier the sim answered to the end, in a turn that kept nothing, is uncertain (SEED=1212 chat 30069: never read)', () => {
      const turns = [turn(1, 'interrupted', 0, 100), turn(2, 'interrupted', 200, 600), turn(3, 'completed', 1000, 1100)];
      const messages = [...head, stored(4, 2, 'user', 'b'), stored(5, 3, 'user', 'c'), stored(6, 3, 'assistant', 'echo: c')];
      const answeredUnread = timed(210, 'finished', ...overX(note, user('b')));
      const again = timed(1050, 'finished', ...overX(user('b'), note, user('c')));
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: ackOf(x) }), [answeredUnread, again])).toEqual([]);
    });

    it('a carrier whose answer a follow-up of its turn shows was accepted, even in a turn that then lost its lease', () => {
      const turns = [turn(1, 'interrupted', 0, 100), turn(2, 'interrupted', 200, 900, { error: 'lease_lost' }), turn(3, 'completed', 1000, 1100)];
      const messages = [...head, stored(4, 3, 'user', 'b'), stored(5, 3, 'assistant', 'echo: b')];
      const stale = timed(250, 'finished', ...overX(note, user('b')));
      // The superseded holder ran the tool the answer asked for and sent its result: it read the answer.
      const followUp = timed(600, 'aborted', ...overX(user('b'), calls('w'), tool('w')));
      const again = timed(1050, 'finished', ...overX(note, user('b')));
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: ackOf(x) }), [stale, followUp, again])).toEqual([
        expect.stringContaining(`again, after request ${stale.id} carrying it was accepted (its turn went on with the answer in request ${followUp.id})`),
      ]);
      // Without the follow-up, whether it read the answer before it lost the lease is known only to it.
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: ackOf(x) }), [stale, again])).toEqual([]);
    });
  });

  describe('omissions', () => {
    it('flags a turn that starts over a tail no request ever carried the note for', () => {
      const omitted = timed(210, 'finished', ...overX(user('b')));
      expect(checkRecoveryNotes(afterRead({ recoveryAckKey: null }), [omitted])).toEqual([
        expect.stringContaining('without the recovery note, which no request ever carried'),
        expect.stringContaining('turn 2 read tail [x] (request'),
      ]);
      expect(checkRecoveryNotes(afterRead(), [timed(210, 'finished', ...overX(note, user('b')))])).toEqual([]);
    });

    it('wants the note again after a carrier the model never answered, behind that turn’s input', () => {
      const messages = [...head, stored(4, 2, 'user', 'b'), stored(5, 3, 'user', 'c'), stored(6, 3, 'assistant', 'echo: c')];
      const turns = [turn(1, 'interrupted', 0, 100), turn(2, 'interrupted', 200, 300), turn(3, 'completed', 400, 600)];
      const cut = timed(210, 'unanswered', ...overX(note, user('b')));
      const snap = snapshot(messages, { turns, recoveryAckKey: ackOf(x) });
      expect(checkRecoveryNotes(snap, [cut, timed(410, 'finished', ...overX(user('b'), note, user('c')))])).toEqual([]);
      expect(checkRecoveryNotes(snap, [cut, timed(410, 'finished', ...overX(user('b'), user('c')))])).toContainEqual(expect.stringContaining('without the recovery note (request'));
    });

    it('flags a tail a committed turn read while the stored acknowledgement never reached it (an uncertain carrier that was not accepted)', () => {
      // Turn 2 carried the note and was stopped as the answer came (uncertain); turn 3 went on over the tail without it.
      const messages = [...head, stored(4, 2, 'user', 'b'), stored(5, 3, 'user', 'c'), stored(6, 3, 'assistant', 'echo: c')];
      const turns = [turn(1, 'interrupted', 0, 100), turn(2, 'interrupted', 200, 300), turn(3, 'completed', 400, 600)];
      const stopped = timed(210, 'aborted', ...overX(note, user('b')));
      const without = timed(410, 'finished', ...overX(user('b'), user('c')));
      // The acknowledgement is stored: the stopped carrier was accepted after all, and turn 3 rightly went without.
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: ackOf(x) }), [stopped, without])).toEqual([]);
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: null }), [stopped, without])).toEqual([
        expect.stringContaining('turn 3 read tail [x] (request'),
      ]);
    });

    it('does not take a steer follow-up, or an interrupted turn’s input before the new one, for a turn start', () => {
      const steered = snapshot([stored(1, 1, 'user', 'a'), storedCalls(2, 1, 'x'), stored(3, 1, 'tool', 'waited', { tool_call_id: 'x' }), stored(4, 1, 'user', 'b')]);
      expect(checkRecoveryNotes(steered, [timed(10, 'finished', ...overX(user('b')))])).toEqual([]);
      // Turn 2 carried the note, the model answered and turn 2 went on with it; turn 3's request needs none.
      const accepted = snapshot([...head, stored(4, 2, 'user', 'b'), stored(5, 2, 'assistant', 'partial'), stored(6, 3, 'user', 'c')]);
      expect(checkRecoveryNotes(accepted, [timed(210, 'finished', ...overX(note, user('b'))), timed(410, 'finished', ...overX(user('b'), user('c')))])).toEqual([]);
    });
  });

  describe('the stored acknowledgement', () => {
    it('flags an acknowledgement no answered carrier justifies', () => {
      const messages = [...head, stored(4, 2, 'user', 'b')];
      const turns = [turn(1, 'interrupted', 0, 100), turn(2, 'interrupted', 200, 300)];
      const cut = timed(210, 'unanswered', ...overX(note, user('b')));
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: null }), [cut])).toEqual([]);
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: ackOf(x) }), [cut])).toEqual([
        expect.stringContaining('stores the acknowledgement of tail [x], but no request carrying its note was answered'),
      ]);
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: 'f00d' }), [cut])).toEqual([expect.stringContaining('the key of no unread tool tail')]);
    });

    it('flags a note carried after the acknowledgement was stored', () => {
      // Turn 2's carrier was answered as it was stopped; turn 3's carrier never was. Neither turn went on, so the tail is still the session's.
      const messages = [...head, stored(4, 2, 'user', 'b'), stored(5, 3, 'user', 'c')];
      const turns = [turn(1, 'interrupted', 0, 100), turn(2, 'interrupted', 200, 300), turn(3, 'interrupted', 400, 500)];
      const stopped = timed(210, 'aborted', ...overX(note, user('b')));
      const later = timed(410, 'unanswered', ...overX(user('b'), note, user('c')));
      // Not stored: turn 2 never read the answer, the note was still owed to turn 3.
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: null }), [stopped, later])).toEqual([]);
      // Stored: only turn 2's request can have stored it, so turn 3 carried the note after it was acknowledged.
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: ackOf(x) }), [stopped, later])).toEqual([
        expect.stringContaining(`request ${later.id} carries the note for tail [x] after its acknowledgement was stored`),
      ]);
    });

    it('flags an acknowledgement behind the last tail a committed turn read', () => {
      // Tail x, read by turn 2 with the note; then tail y (turn 3 interrupted), read by turn 4 with the note.
      const y = storedTool(8, 3, 'y');
      const messages = [...readByTurnTwo, stored(6, 3, 'user', 'c'), storedCalls(7, 3, 'y'), y, stored(9, 4, 'user', 'd'), stored(10, 4, 'assistant', 'echo: d')];
      const turns = [...interruptedThenAnswered, turn(3, 'interrupted', 500, 600), turn(4, 'completed', 700, 800)];
      const first = timed(210, 'finished', ...overX(note, user('b')));
      const second = timed(710, 'finished', ...overX(user('b'), { role: 'assistant', content: 'echo: b' }, user('c'), calls('y'), tool('y'), note, user('d')));
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: ackOf(y) }), [first, second])).toEqual([]);
      expect(checkRecoveryNotes(snapshot(messages, { turns, recoveryAckKey: ackOf(x) }), [first, second])).toEqual([
        expect.stringContaining("turn 4 read tail [y] (request"),
      ]);
    });
  });
});
