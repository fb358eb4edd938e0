import type { Platform } from './conversation-key.ts';

/**
 * A user's message's state, shown as the bot's reaction on it (STATUS_REACTIONS):
 * `queued` waits while the conversation is busy, `taken` is in a running turn,
 * `done` was answered, `failed` got the failure notice. A turn interrupted or
 * stopped (/stop, or new input in busy mode `interrupt`) shows no reaction: the
 * user asked for it to end, and "Stopped." (or the next turn's answer) says the rest.
 */
export type ReactionStatus = 'queued' | 'taken' | 'done' | 'failed';

/** How a committed turn ended (turns.status). */
export type SettledTurnStatus = 'completed' | 'failed' | 'interrupted' | 'cancelled';

/**
 * The emoji per platform. Telegram lets bots react only with a fixed list
 * (ReactionTypeEmoji) that has 👀 but not ✅ ❌ ⏳, so it shows 👍 👎 and ✍
 * (queued: "noted"). Slack names emoji without colons.
 */
export const reactionEmoji: Readonly<Record<Platform, Readonly<Record<ReactionStatus, string>>>> = {
  telegram: { queued: '✍', taken: '👀', done: '👍', failed: '👎' },
  slack: { queued: 'hourglass_flowing_sand', taken: 'eyes', done: 'white_check_mark', failed: 'x' },
  discord: { queued: '⏳', taken: '👀', done: '✅', failed: '❌' },
};

/** The reaction a committed turn leaves on its input: null = none. */
export function reactionOfTurn(status: SettledTurnStatus): ReactionStatus | null {
  if (status === 'completed') return 'done';
  if (status === 'failed') return 'failed';
  return null;
}

/** One reaction change on one message: the emoji to take away (the bot's previous one) and the one to put. */
export interface ReactionChange {
  remove: string | null;
  add: string | null;
}

/** The change from the bot's current reaction to the next (null: none); null when nothing changes. */
export function planReactionChange(platform: Platform, current: ReactionStatus | null, next: ReactionStatus | null): ReactionChange | null {
  if (current === next) return null;
  const table = reactionEmoji[platform];
  return { remove: current === null ? null : table[current], add: next === null ? null : table[next] };
}
