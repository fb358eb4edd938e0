import { randomInt } from 'node:crypto';

/**
 * Pairing (DM_POLICY=pairing, docs/admin.md "Pairing"): an unknown user's
 * direct message gets a one-time code an operator approves. The rules here
 * are pure; the store (packages/db pairing-store) applies them under a
 * per-platform lock so the cap and one code per user hold under concurrency.
 */
export const pairingRules = {
  codeLength: 8,
  /** A code is good for an hour. */
  ttlMs: 60 * 60_000,
  /** Pending codes per platform at most: a flood of strangers cannot bury the operator's list. */
  maxPendingPerPlatform: 3,
  /** A user who writes again while their code is pending is reminded of the same code at most this often; silence in between. */
  remindAfterMs: 10 * 60_000,
  /** A user whose code an operator denied gets no new code for this long (and the one-line refusal, once a day). */
  deniedForMs: 24 * 60 * 60_000,
} as const;

export type PairingRules = { [K in keyof typeof pairingRules]: number };

/** Upper-case letters and digits without the look-alikes 0/O, 1/I/L: a code read aloud or retyped survives. */
export const pairingAlphabet = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/** A fresh code: each character drawn with node's crypto `randomInt`, which is uniform (no modulo bias). */
export function generatePairingCode(length: number = pairingRules.codeLength): string {
  let code = '';
  for (let i = 0; i < length; i++) code += pairingAlphabet[randomInt(pairingAlphabet.length)];
  return code;
}

/**
 * A code as an operator typed it (any case, spaces or dashes between groups)
 * in its stored form, or null when it cannot be a code at all.
 */
export function normalisePairingCode(input: string, length: number = pairingRules.codeLength): string | null {
  const code = input.replace(/[\s-]/g, '').toUpperCase();
  if (code.length !== length) return null;
  for (const char of code) if (!pairingAlphabet.includes(char)) return null;
  return code;
}

/** What the store found for a user asking to pair, read under the platform's lock. */
export interface PairingState {
  /** The user's pending code, if one is still unexpired. */
  pending: { code: string; expiresAt: Date; lastToldAt: Date } | null;
  /** Unexpired pending codes on the platform, the user's own included. */
  pendingOnPlatform: number;
  /** When an operator last denied this user's code, if ever. */
  deniedAt?: Date | null;
  now: Date;
}

export type PairingDecision =
  /** A new code, good until `expiresAt`; tell the user. */
  | { kind: 'issue'; expiresAt: Date }
  /** Tell the user their pending code again. */
  | { kind: 'remind'; code: string; expiresAt: Date }
  /** The user was told recently: say nothing (the rate limit). */
  | { kind: 'quiet' }
  /** The platform already has the most pending codes: the oldest is evicted (its code no longer works) and a new one issued. */
  | { kind: 'evict_oldest'; expiresAt: Date }
  /** An operator denied this user within `deniedForMs`: no code; the refusal. */
  | { kind: 'denied' };

/**
 * What a message from a user who needs pairing leads to: one code per user,
 * reminders spaced out, a cap per platform. At the cap the oldest pending code
 * is evicted rather than the newcomer refused (issue 30, finding 7): a few
 * accounts re-asking for codes could otherwise block every new user for
 * good; an operator clears them for longer by denying.
 */
export function decidePairingRequest(state: PairingState, rules: PairingRules = pairingRules): PairingDecision {
  const { pending, now } = state;
  if (state.deniedAt && now.getTime() - state.deniedAt.getTime() < rules.deniedForMs) return { kind: 'denied' };
  if (pending && pending.expiresAt.getTime() > now.getTime()) {
    if (now.getTime() - pending.lastToldAt.getTime() < rules.remindAfterMs) return { kind: 'quiet' };
    return { kind: 'remind', code: pending.code, expiresAt: pending.expiresAt };
  }
  const expiresAt = new Date(now.getTime() + rules.ttlMs);
  return state.pendingOnPlatform >= rules.maxPendingPerPlatform ? { kind: 'evict_oldest', expiresAt } : { kind: 'issue', expiresAt };
}

/** Whether a code can no longer be approved. */
export function isPairingExpired(expiresAt: Date, now: Date): boolean {
  return expiresAt.getTime() <= now.getTime();
}

/** The line a user gets with their code (new or reminded). */
export function renderPairingCodeNotice(code: string, expiresAt: Date, now: Date): string {
  const minutes = Math.max(1, Math.ceil((expiresAt.getTime() - now.getTime()) / 60_000));
  return `I don't know you yet. Ask the people who run this bot to approve pairing code ${code} (it expires in ${minutes} minute${minutes === 1 ? '' : 's'}). I will tell you here once it is approved.`;
}

export const pairingNotices = {
  approved: 'You are approved: you can talk to me now.',
} as const;
