import { normaliseText } from './normalise-text.ts';
import { isScheduleUserId } from './schedules.ts';

/**
 * The user a triggered turn (POST /hooks/{name}) counts as: `hook:<name>`, in
 * the conversation's platform and account (turns.user_key
 * `platform:account:hook:<name>`). No platform gives a person such an id
 * (Telegram and Discord ids are numbers, Slack's start with U or W), so the
 * per-user limits count each hook apart from every person, and no chat user
 * can ever be the user a hook's approval question was asked of.
 */
export function hookUserId(hookName: string): string {
  return `${hookUserPrefix}${hookName}`;
}

const hookUserPrefix = 'hook:';

export function isHookUserId(userId: string): boolean {
  return userId.startsWith(hookUserPrefix);
}

/**
 * Who an approval question of a turn may be answered by besides APPROVERS:
 * the user whose input started it, except for a triggered or scheduled turn, whose
 * questions are named for nobody, so only an operator listed in APPROVERS can
 * answer them and the timeout declines them otherwise (fail closed).
 */
export function approvalAskedOf(userKey: string, userId: string): string | null {
  return isHookUserId(userId) || isScheduleUserId(userId) ? null : userKey;
}

/** The event id a hook call is stored and deduplicated under (with the conversation's platform and account). */
export function hookEventId(hookName: string, deliveryId: string): string {
  return `hook:${hookName}:${deliveryId}`;
}

/**
 * The user's text of a triggered turn: the hook's prompt with every
 * `{{body}}` replaced by the request body as text (a JSON body as its raw
 * text), cleaned as user text is (normaliseText). Replaced in one pass, so a
 * body that itself contains `{{body}}` is never expanded again.
 */
export function renderHookPrompt(template: string, body: string): string {
  return normaliseText(template.split('{{body}}').join(body));
}
