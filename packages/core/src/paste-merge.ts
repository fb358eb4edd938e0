import type { Platform } from './conversation-key.ts';

/** The longest message each platform's client sends; a paste longer than this arrives in parts. */
export const clientMessageLimits: Record<Platform, number> = { telegram: 4096, discord: 2000, slack: 4000 };

/** A part is "near the limit" when it fills at least this share of it (a long paste the client split into parts). */
const nearLimitShare = 0.9;

/**
 * Whether a message looks like one part of a long paste that the user's
 * client split: it is close to the platform's message limit, so another part
 * is probably on its way.
 */
export function isNearLimitPart(platform: Platform, text: string): boolean {
  return text.length >= Math.floor(clientMessageLimits[platform] * nearLimitShare);
}
