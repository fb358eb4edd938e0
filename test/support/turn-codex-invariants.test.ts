import { describe, expect, it } from 'vitest';
import type { Logged } from './codex-system.ts';
import {
  checkApprovalPosts,
  checkCodex,
  checkCodexDecisions,
  checkCodexInput,
  checkCodexReplies,
  codexLogOf,
  withoutApprovalPosts,
  type CodexRecord,
  type StoredApproval,
} from './turn-codex-invariants.ts';
import { resumeNotePrefix } from './restart-helpers.ts';
import { codexShare } from './turn-codex-random.ts';
import type { ChatSnapshot, ModelRequest, ShownMessage, StoredEvent, StoredMessage, StoredTurn } from './turn-helpers.ts';
import { checkAll } from './turn-invariants.ts';
import { generateScript, Random } from './turn-random.ts';

// The Codex checks must catch what they claim to: each is fed a good snapshot and a hand-made violation.

const at = (ms: number) => new Date(ms);
const run = 'c1:a0 please run it\nrun: make c1-a0';
const hello = 'c1:a1 hello codex';

function turn(id: number, status: string, startMs: number, endMs: number, extra: Partial<StoredTurn> = {}): StoredTurn {
  return { id, status, error: null, started_at: at(startMs), ended_at: at(endMs), ...extra };
}
function event(id: number, text: string, turnId: number | null): StoredEvent {
  return { id, text, status: 'done', turn_id: turnId, received_at: at(0) };
}
function message(seq: number, turnId: number, role: StoredMessage['role'], content: string, inbound: number | null = null): StoredMessage {
  return { session_id: 1, seq, role, content, tool_calls: null, tool_call_id: null, tool_name: null, inbound_event_id: inbound, turn_id: turnId };
}
function approval(id: number, turnId: number, status: StoredApproval['status'], extra: Partial<StoredApproval> = {}): StoredApproval {
  const via = { approved: 'button', approved_for_session: 'text', denied: 'text', expired: 'timeout', cancelled: 'cancelled', pending: null }[status];
  return { id, turn_id: turnId, status, decided_via: via, summary: 'run `make c1-a0`', question_message_id: `${10 + id}`, decided_at: status === 'pending' ? null : at(1500), tidied: status !== 'pending', ...extra };
}

/** Turn 1 asked to run make c1-a0, the user approved, Codex ran it; turn 2 echoed "hello". */
const snapshot: ChatSnapshot = {
  chatId: 1,
  conversationId: 7,
  busyMode: null,
  recoveryAckKey: null,
  runtime: 'codex',
  events: [event(1, run, 1), event(2, '/approve', null), event(3, hello, 2)],
  turns: [turn(1, 'completed', 1000, 2000), turn(2, 'completed', 2100, 2500)],
  messages: [message(1, 1, 'user', run, 1), message(2, 1, 'assistant', 'codex: ran make c1-a0'), message(3, 2, 'user', hello, 3), message(4, 2, 'assistant', `codex: ${hello}`)],
  outbox: [],
};
const good: CodexRecord = {
  approvals: [approval(1, 1, 'approved')],
  turnStarts: [
    { at: 1100, proc: 'p1', text: run },
    { at: 2200, proc: 'p1', text: hello },
  ],
  decisions: [{ at: 1600, proc: 'p1', command: 'make c1-a0', decision: 'accept' }],
  answers: [{ command: 'make c1-a0', choice: 'approve', at: 1400 }],
};
const with_ = (changes: Partial<CodexRecord>): CodexRecord => ({ ...good, ...changes });
const shown = (id: number, text: string, buttons = false): ShownMessage => ({ message_id: id, chat_id: 1, text, ...(buttons ? { reply_markup: { inline_keyboard: [] } } : {}) });

describe('Codex turn invariants', () => {
  it('pass on a conversation where everything held', () => {
    const chat = [shown(11, 'Approval needed: run a command?\nmake c1-a0\n\nApproved by 1.'), shown(12, 'Approved by 1.'), shown(13, 'codex: ran make c1-a0')];
    expect(checkCodex(snapshot, good, chat, { kills: false })).toEqual([]);
  });

  describe('checkCodexInput', () => {
    it('flags a message that never reached Codex, and accepts one carried in a new thread’s history', () => {
      expect(checkCodexInput(snapshot, with_({ turnStarts: [good.turnStarts[1]!] }))).toEqual([expect.stringContaining('event 1 "c1:a0 please run it\\nrun: make c1-a0" never reached Codex')]);
      const carried = `[Earlier conversation in this chat, for context:]\nUser: ${run}\n[End of earlier conversation.]\n\n${hello}`;
      expect(checkCodexInput(snapshot, with_({ turnStarts: [{ at: 2200, proc: 'p2', text: carried }] }))).toEqual([]);
    });

    it('flags a message whose turn was stopped before Codex got it, unless a later turn on the thread carried it (SEED=101)', () => {
      const stopped = { ...snapshot, turns: [snapshot.turns[0]!, turn(2, 'cancelled', 2100, 2500)], messages: snapshot.messages.slice(0, 3) };
      const unseen = with_({ turnStarts: [good.turnStarts[0]!] });
      expect(checkCodexInput(stopped, unseen)).toEqual([expect.stringContaining('event 3 "c1:a1 hello codex" never reached Codex')]);
      const carried = { at: 2600, proc: 'p1', text: `[Earlier conversation in this chat, for context:]\nUser: ${hello}\n[End of earlier conversation.]\n\nc1:a2 next` };
      expect(checkCodexInput(stopped, with_({ turnStarts: [good.turnStarts[0]!, carried] }))).toEqual([]);
    });

    it('flags a message sent to Codex as new words after the turn that took it committed, but not as carried history', () => {
      const late = { at: 2400, proc: 'p9', text: run };
      expect(checkCodexInput(snapshot, with_({ turnStarts: [...good.turnStarts, late] }))).toEqual([expect.stringContaining('reached Codex again (process p9) 400 ms after turn 1 that took it committed')]);
      const carried = { at: 2400, proc: 'p9', text: `[Earlier conversation in this chat, for context:]\nUser: ${run}\n[End of earlier conversation.]\n\n${hello}` };
      expect(checkCodexInput(snapshot, with_({ turnStarts: [...good.turnStarts, carried] }))).toEqual([]);
    });
  });

  describe('checkCodexDecisions', () => {
    it('flags a question recorded approved that the user denied, or that nobody answered', () => {
      expect(checkCodexDecisions(snapshot, with_({ answers: [{ command: 'make c1-a0', choice: 'deny', at: 1400 }] }))).toEqual([expect.stringContaining('is approved (via button), but the user answered deny')]);
      expect(checkCodexDecisions(snapshot, with_({ answers: [] }))).toEqual([expect.stringContaining('but the user answered nothing')]);
      expect(checkCodexDecisions(snapshot, with_({ approvals: [approval(1, 1, 'approved', { decided_via: 'auto' })] }))).toEqual([expect.stringContaining('(via auto)')]);
    });

    it('flags an approval Codex got with no question decided so before it', () => {
      const early = { at: 1000, proc: 'p1', command: 'make c1-a0', decision: 'accept' };
      expect(checkCodexDecisions(snapshot, with_({ decisions: [early] }))).toEqual([
        expect.stringContaining('told accept for make c1-a0 (process p1), but no question of it was approved before'),
        expect.stringContaining('Codex was never told approved'),
      ]);
      const twice = [...good.decisions, { ...good.decisions[0]!, at: 1700 }];
      expect(checkCodexDecisions(snapshot, with_({ decisions: twice }))).toEqual([expect.stringContaining('no question of it was approved before')]);
    });

    it('flags a completed turn whose answer never reached Codex as given: denied or timed out must be a refusal', () => {
      const denied = with_({ approvals: [approval(1, 1, 'denied')], answers: [{ command: 'make c1-a0', choice: 'deny', at: 1400 }] });
      expect(checkCodexDecisions(snapshot, { ...denied, decisions: [{ at: 1600, proc: 'p1', command: 'make c1-a0', decision: 'decline' }] })).toEqual([]);
      expect(checkCodexDecisions(snapshot, { ...denied, decisions: [] })).toEqual([expect.stringContaining('is denied and its turn 1 completed, but Codex was never told refused')]);
      const expired = with_({ approvals: [approval(1, 1, 'expired')], answers: [], decisions: [{ at: 4000, proc: 'p1', command: 'make c1-a0', decision: 'cancel' }] });
      expect(checkCodexDecisions(snapshot, expired)).toEqual([expect.stringContaining('is expired and its turn 1 completed, but Codex was never told refused')]);
    });

    it('flags a question withdrawn or left pending in a completed turn; a pending one of a cut-off turn passes', () => {
      expect(checkCodexDecisions(snapshot, with_({ approvals: [approval(1, 1, 'cancelled')], decisions: [] }))).toEqual([expect.stringContaining('is cancelled, yet its turn 1 completed')]);
      const pending = with_({ approvals: [approval(1, 1, 'pending')], decisions: [], answers: [] });
      expect(checkCodexDecisions(snapshot, pending)).toEqual([expect.stringContaining('left pending by turn 1 (completed)'), expect.stringContaining('is pending, yet its turn 1 completed')]);
      const cutOff = { ...snapshot, turns: [turn(1, 'failed', 1000, 2000, { error: 'cut_off_by_restart', cut_off_at: at(2000) }), snapshot.turns[1]!] };
      expect(checkCodexDecisions(cutOff, pending)).toEqual([]);
    });
  });

  describe('checkCodexReplies', () => {
    it('flags a reply that does not say what became of the command', () => {
      const declined = { ...snapshot, messages: snapshot.messages.map((m) => (m.seq === 2 ? { ...m, content: 'codex: make c1-a0 was declined' } : m)) };
      expect(checkCodexReplies(declined, good)).toEqual([expect.stringContaining('is approved, but its reply is "codex: make c1-a0 was declined", not "codex: ran make c1-a0"')]);
      expect(checkCodexReplies(declined, with_({ approvals: [approval(1, 1, 'expired')] }))).toEqual([]);
      expect(checkCodexReplies(snapshot, with_({ approvals: [] }))).toEqual(['turn 1 completed "run: make c1-a0" without asking']);
    });
  });

  describe('checkApprovalPosts', () => {
    it('flags a settled question that still shows its buttons, and one never shown', () => {
      expect(checkApprovalPosts(good, [shown(11, 'Approval needed: run a command?', true)], { kills: false })).toEqual(['approval 1 is approved, but its question still shows its buttons']);
      expect(checkApprovalPosts(good, [], { kills: false })).toEqual(["approval 1's question (message 11) was never shown"]);
    });

    it('lets a settled question keep its buttons only when a sweeper claimed its edit and a kill cut its asking turn off', () => {
      const chat = [shown(11, 'Approval needed: run a command?', true)];
      const turnOfApproval = good.approvals[0]!.turn_id;
      expect(checkApprovalPosts(good, chat, { kills: true, cutOffTurns: new Set([turnOfApproval]) })).toEqual([]);
      expect(checkApprovalPosts(good, chat, { kills: false, cutOffTurns: new Set([turnOfApproval]) })).toHaveLength(1);
      expect(checkApprovalPosts(good, chat, { kills: true, cutOffTurns: new Set([turnOfApproval + 1]) })).toHaveLength(1);
      // Owed its edit and never edited: the sweep did not do its job (SEED=505, SEED=606 before it did).
      const owed = { ...good, approvals: good.approvals.map((a) => ({ ...a, tidied: false })) };
      expect(checkApprovalPosts(owed, chat, { kills: true, cutOffTurns: new Set([turnOfApproval]) })).toEqual(['approval 1 is approved, but its question still shows its buttons']);
    });

    it('flags a question no approval recorded, unless a worker was killed', () => {
      const chat = [shown(11, 'Approval needed: run a command?'), shown(99, 'Approval needed: run a command?')];
      expect(checkApprovalPosts(good, chat, { kills: false })).toEqual(['1 question(s) shown that no approval recorded: 99']);
      expect(checkApprovalPosts(good, chat, { kills: true })).toEqual([]);
    });

    it('wants one "No answer in time" per timed-out question: never more, fewer only after a kill', () => {
      const expired = with_({ approvals: [approval(1, 1, 'expired')] });
      const question = shown(11, 'Approval needed: run a command?');
      expect(checkApprovalPosts(expired, [question, shown(12, 'No answer in time: declined.')], { kills: false })).toEqual([]);
      expect(checkApprovalPosts(expired, [question], { kills: false })).toEqual([expect.stringContaining('1 question(s) timed out, but the chat said')]);
      expect(checkApprovalPosts(expired, [question], { kills: true })).toEqual([]);
      expect(checkApprovalPosts(good, [question, shown(12, 'No answer in time: declined.')], { kills: true })).toEqual([expect.stringContaining('0 question(s) timed out')]);
    });
  });

  it('withoutApprovalPosts leaves what went through the outbox', () => {
    const chat = [shown(11, 'Approval needed: run a command?'), shown(12, 'Approved by 1.'), shown(13, 'No answer in time: declined.'), shown(14, 'codex: ran make c1-a0')];
    expect(withoutApprovalPosts(chat, good).map((m) => m.message_id)).toEqual([12, 14]);
  });

  it('codexLogOf takes the turn/starts and decisions of the fake processes whose cwd is the conversation’s workspace', () => {
    const line = (proc: string, received: Logged['received'], extra: Partial<Logged> = {}): Logged => ({ pid: 1, instance: proc, at: 5, received, ...extra });
    const log = [
      line('a', { id: 1, method: 'thread/start', params: { cwd: '/w/7' } }),
      line('a', { id: 2, method: 'turn/start', params: { cwd: '/w/7', input: [{ type: 'text', text: run }] } }),
      line('a', { id: 9, result: { decision: 'accept' } }, { answering: { method: 'item/commandExecution/requestApproval', command: 'make c1-a0' } }),
      line('b', { id: 2, method: 'turn/start', params: { cwd: '/w/70', input: [{ type: 'text', text: 'other' }] } }),
    ];
    expect(codexLogOf(log, 7)).toEqual({ turnStarts: [{ at: 5, proc: 'a', text: run }], decisions: [{ at: 5, proc: 'a', command: 'make c1-a0', decision: 'accept' }] });
  });

  it('checkAll skips the checks over OpenAI model requests for a Codex conversation, and only those', () => {
    // A resume note with no cut-off before it: (h) fails it on the OpenAI runtime; a Codex turn makes no such request.
    const noted: ModelRequest = { id: 1, receivedAt: 1100, body: { messages: [{ role: 'system', content: `${resumeNotePrefix} …` }, { role: 'user', content: hello }] }, stream: true, respondedAt: 1150, finishedAt: 1200 };
    const outbox = [
      { id: 1, text: 'codex: ran make c1-a0', status: 'sent', turn_id: 1 },
      { id: 2, text: `codex: ${hello}`, status: 'sent', turn_id: 2 },
    ];
    const chat = [shown(1, 'codex: ran make c1-a0'), shown(2, `codex: ${hello}`)];
    expect(checkAll({ ...snapshot, outbox }, [noted], chat)).toEqual([]);
    expect(checkAll({ ...snapshot, outbox, runtime: null }, [noted], chat)).toEqual([expect.stringMatching(/^\(h\) request 1 carries the resume note, but no turn was cut off/)]);
    // The checks about the chat still apply: a reply the user never saw fails (f).
    expect(checkAll({ ...snapshot, outbox }, [], chat.slice(0, 1))).toEqual([expect.stringMatching(/^\(f\) /)]);
  });
});

describe('the Codex conversations of the generator', () => {
  /** The scripts of 200 conversations with TURN_CODEX as given (undefined: unset), whatever the environment running the tests says. */
  function scriptsOf(seed: number, turnCodex: string | undefined) {
    const previous = process.env.TURN_CODEX;
    if (turnCodex === undefined) delete process.env.TURN_CODEX;
    else process.env.TURN_CODEX = turnCodex;
    try {
      return Array.from({ length: 200 }, (_, i) => generateScript(new Random(seed + i), i, 30_000 + i));
    } finally {
      if (previous === undefined) delete process.env.TURN_CODEX;
      else process.env.TURN_CODEX = previous;
    }
  }

  it('makes about one conversation in five a Codex one, the same for a seed, with run: actions the user answers or not', () => {
    const scripts = scriptsOf(7, undefined);
    const codex = scripts.filter((s) => s.runtime === 'codex');
    expect(codex.length).toBeGreaterThan(20);
    expect(codex.length).toBeLessThan(60);
    expect(scriptsOf(7, undefined)).toEqual(scripts);
    const runs = codex.flatMap((s) => s.actions.flatMap((a) => (a.kind === 'run' ? [a] : [])));
    expect(new Set(runs.map((a) => a.answer))).toEqual(new Set(['approve', 'approve-session', 'deny', 'timeout']));
    expect(runs.every((a) => a.text.endsWith(`\nrun: ${a.command}`))).toBe(true);
  });

  it('TURN_CODEX=off makes none', () => {
    expect(codexShare({ TURN_CODEX: 'off' })).toBe(0);
    expect(scriptsOf(7, 'off').some((s) => s.runtime === 'codex')).toBe(false);
  });
});
