import type { ChatCommand } from './chat-commands.ts';

/**
 * Approvals asked of the chat user (docs/codex.md, "Approvals in chat"): the pure
 * rules both doors share. The worker asks (a question with buttons and the
 * `/approve`, `/approve session`, `/deny` commands); the gateway decides
 * whichever door the answer came through.
 */

/** What a user can answer. */
export const approvalChoices = ['approved', 'approved_for_session', 'denied'] as const;
export type ApprovalChoice = (typeof approvalChoices)[number];

/** One letter per choice in button payloads (Telegram's callback_data is at most 64 bytes). */
const choiceLetters: Record<ApprovalChoice, string> = { approved: 'a', approved_for_session: 's', denied: 'd' };
const lettersToChoice = new Map(Object.entries(choiceLetters).map(([choice, letter]) => [letter, choice as ApprovalChoice]));

/** The payload prefix: a button press whose payload does not start with it is not an approval answer. */
export const approvalPayloadPrefix = 'apv';
const tokenPattern = /^[A-Za-z0-9_-]{8,48}$/;
const payloadPattern = /^apv:([A-Za-z0-9_-]{8,48}):([asd])$/;

/** `apv:<token>:a|s|d`: the button payload (callback_data, Slack action value, Discord custom_id). */
export function encodeApprovalPayload(token: string, choice: ApprovalChoice): string {
  if (!tokenPattern.test(token)) throw new Error('approval token must be 8-48 characters of A-Z a-z 0-9 _ -');
  return `${approvalPayloadPrefix}:${token}:${choiceLetters[choice]}`;
}

/** The token and choice of a button payload; null for anything else (another button, a forged or cut payload). */
export function parseApprovalPayload(payload: string): { token: string; choice: ApprovalChoice } | null {
  const match = payloadPattern.exec(payload);
  if (!match) return null;
  const choice = lettersToChoice.get(match[2] as string);
  return choice ? { token: match[1] as string, choice } : null;
}

/** The choice a text command makes: `/approve`, `/approve session`, `/deny`; null for any other command (or args it does not know). */
export function approvalChoiceOfCommand(command: ChatCommand | null): ApprovalChoice | null {
  return parseApprovalCommand(command)?.choice ?? null;
}

/**
 * The choice and the approve code a text command carries: `/approve [code]`,
 * `/approve session [code]`, `/deny`. The code (6 digits) is what a question
 * too long to show whole asks for; null for anything else.
 */
export function parseApprovalCommand(command: ChatCommand | null): { choice: ApprovalChoice; code?: string } | null {
  if (!command) return null;
  if (command.name === 'deny') return { choice: 'denied' };
  if (command.name !== 'approve') return null;
  const match = /^(?:(?:for\s+)?session)?\s*(\d{6})?$/i.exec(command.args.trim());
  if (!match) return null;
  const choice: ApprovalChoice = /session/i.test(command.args) ? 'approved_for_session' : 'approved';
  return match[1] ? { choice, code: match[1] } : { choice };
}

/** True for `/approve …` and `/deny …`: answers, decided where they arrive, never turn input. */
export function isApprovalCommand(command: ChatCommand | null): boolean {
  return command?.name === 'approve' || command?.name === 'deny';
}

/** The key a user is known by in turns and approvals: `platform:account:user`. */
export function userKeyOf(platform: string, accountId: string, userId: string): string {
  return `${platform}:${accountId}:${userId}`;
}

/**
 * Who may answer: the user whose message started the turn, or a configured
 * approver. A question nobody was named for (no asking user) is answered by
 * approvers only.
 */
export function mayAnswerApproval(input: { askedOfUserKey: string | null; answeringUserKey: string; approvers: readonly string[] }): boolean {
  if (input.askedOfUserKey !== null && input.askedOfUserKey === input.answeringUserKey) return true;
  return input.approvers.includes(input.answeringUserKey);
}

/** Button labels, in the order shown. */
export const approvalButtons: readonly { choice: ApprovalChoice; label: string }[] = [
  { choice: 'approved', label: 'Approve' },
  { choice: 'approved_for_session', label: 'Approve for session' },
  { choice: 'denied', label: 'Deny' },
];

/** What the conversation is told once a question is answered. `by`: the answering user's id as the platform shows it. */
export function renderApprovalDecision(choice: ApprovalChoice, by: string): string {
  switch (choice) {
    case 'approved':
      return `Approved by ${by}.`;
    case 'approved_for_session':
      return `Approved for this session by ${by}.`;
    case 'denied':
      return `Denied by ${by}.`;
  }
}

export const approvalReplies = {
  timedOut: 'No answer in time: declined.',
  cancelled: 'The question was withdrawn.',
  nothingPending: 'There is no question waiting for an answer.',
  alreadyAnswered: 'This question was already answered.',
  expired: 'This question is no longer open.',
  unknownArgs: 'Use /approve, /approve session or /deny.',
  codeRequired: 'This request was too long to show whole: approve it by typing /approve and the code the question shows.',
} as const;

/**
 * The line under a settled question once its buttons are gone: the same
 * whether the asking turn edits it or the recovery sweep does (its turn's
 * worker died while it was open).
 */
export function describeApprovalOutcome(status: 'pending' | 'approved' | 'approved_for_session' | 'denied' | 'cancelled' | 'expired'): string {
  switch (status) {
    case 'expired':
    case 'pending':
      return approvalReplies.timedOut;
    case 'cancelled':
      return approvalReplies.cancelled;
    case 'denied':
      return 'Denied.';
    case 'approved_for_session':
      return 'Approved for this session.';
    case 'approved':
      return 'Approved.';
  }
}

/** The refusal told to someone who may not answer: names the asking user by their id on the platform. */
export function renderNotAllowed(askedOfUserKey: string | null): string {
  const who = askedOfUserKey ? askedOfUserKey.split(':').slice(2).join(':') : undefined;
  return who ? `Only ${who} or an approver can answer this.` : 'Only an approver can answer this.';
}
