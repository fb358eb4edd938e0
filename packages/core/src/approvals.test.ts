import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  approvalChoiceOfCommand,
  encodeApprovalPayload,
  isApprovalCommand,
  mayAnswerApproval,
  parseApprovalCommand,
  parseApprovalPayload,
  renderNotAllowed,
  userKeyOf,
} from './approvals.ts';
import { classifySignal, parseChatCommand } from './chat-commands.ts';

describe('approval button payloads', () => {
  it('round-trips every choice and fits Telegram callback_data (64 bytes)', () => {
    const token = 'Zx9_-aBcDeFgHiJkLmNoPq';
    for (const choice of ['approved', 'approved_for_session', 'denied'] as const) {
      const payload = encodeApprovalPayload(token, choice);
      expect(Buffer.byteLength(payload)).toBeLessThanOrEqual(64);
      expect(parseApprovalPayload(payload)).toEqual({ token, choice });
    }
    expect(encodeApprovalPayload(token, 'approved_for_session')).toBe(`apv:${token}:s`);
  });

  it('refuses payloads that are not ours, cut short or forged', () => {
    for (const payload of ['', 'apv', 'apv:short:a', 'apv:Zx9_-aBcDeFgHiJkLmNoPq:x', 'apv:Zx9_-aBcDeFgHiJkLmNoPq', 'other:Zx9_-aBcDeFgHiJkLmNoPq:a', 'apv:Zx9 aBcDeFgHiJkLmNoPq:a']) {
      expect(parseApprovalPayload(payload)).toBeNull();
    }
    expect(() => encodeApprovalPayload('bad token!', 'approved')).toThrow();
  });

  it('parses anything without throwing', () => {
    fc.assert(fc.property(fc.string(), (payload) => {
      const parsed = parseApprovalPayload(payload);
      if (parsed) expect(encodeApprovalPayload(parsed.token, parsed.choice)).toBe(payload);
    }));
  });
});

describe('approval text commands', () => {
  it('reads /approve, /approve session and /deny, and nothing else as an answer', () => {
    expect(approvalChoiceOfCommand(parseChatCommand('/approve'))).toBe('approved');
    expect(approvalChoiceOfCommand(parseChatCommand('/approve session'))).toBe('approved_for_session');
    expect(approvalChoiceOfCommand(parseChatCommand('!Approve SESSION'))).toBe('approved_for_session');
    expect(approvalChoiceOfCommand(parseChatCommand('/deny'))).toBe('denied');
    expect(approvalChoiceOfCommand(parseChatCommand('/approve everything'))).toBeNull();
    expect(approvalChoiceOfCommand(parseChatCommand('/stop'))).toBeNull();
    expect(approvalChoiceOfCommand(parseChatCommand('approve'))).toBeNull();
  });

  it('are commands that never interrupt a running turn', () => {
    expect(isApprovalCommand(parseChatCommand('/approve session'))).toBe(true);
    expect(isApprovalCommand(parseChatCommand('/deny'))).toBe(true);
    expect(isApprovalCommand(parseChatCommand('/status'))).toBe(false);
    expect(classifySignal('/approve')).toBe('none');
    expect(classifySignal('/deny')).toBe('none');
  });
});

describe('who may answer', () => {
  const asked = userKeyOf('telegram', '123', '42');
  it('lets the asking user and the approvers answer, nobody else', () => {
    expect(asked).toBe('telegram:123:42');
    expect(mayAnswerApproval({ askedOfUserKey: asked, answeringUserKey: asked, approvers: [] })).toBe(true);
    expect(mayAnswerApproval({ askedOfUserKey: asked, answeringUserKey: 'telegram:123:43', approvers: [] })).toBe(false);
    expect(mayAnswerApproval({ askedOfUserKey: asked, answeringUserKey: 'telegram:123:43', approvers: ['telegram:123:43'] })).toBe(true);
    // The same user id on another bot or platform is another user.
    expect(mayAnswerApproval({ askedOfUserKey: asked, answeringUserKey: 'telegram:999:42', approvers: [] })).toBe(false);
    expect(mayAnswerApproval({ askedOfUserKey: null, answeringUserKey: asked, approvers: [] })).toBe(false);
  });

  it('names the asking user in the refusal', () => {
    expect(renderNotAllowed(asked)).toBe('Only 42 or an approver can answer this.');
    expect(renderNotAllowed(null)).toBe('Only an approver can answer this.');
  });
});


describe('parseApprovalCommand', () => {
  const command = (text: string) => parseChatCommand(text);
  it('reads the approve code a question too long to show asks for, with or without "session"', () => {
    expect(parseApprovalCommand(command('/approve'))).toEqual({ choice: 'approved' });
    expect(parseApprovalCommand(command('/approve 042917'))).toEqual({ choice: 'approved', code: '042917' });
    expect(parseApprovalCommand(command('/approve session 042917'))).toEqual({ choice: 'approved_for_session', code: '042917' });
    expect(parseApprovalCommand(command('/approve for session'))).toEqual({ choice: 'approved_for_session' });
    expect(parseApprovalCommand(command('/deny'))).toEqual({ choice: 'denied' });
  });
  it('knows nothing else: a short code, words, or another command', () => {
    for (const text of ['/approve 1234', '/approve yes', '/approve 1234567', '/approve session x', '/stop']) expect(parseApprovalCommand(command(text)), text).toBeNull();
  });
});
