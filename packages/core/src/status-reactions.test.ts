import { describe, expect, it } from 'vitest';
import { planReactionChange, reactionEmoji, reactionOfTurn } from './status-reactions.ts';

/** Bot reactions Telegram accepts (ReactionTypeEmoji), the ones this module may use. */
const telegramAllowed = new Set(['👍', '👎', '❤', '🔥', '👏', '🤔', '🎉', '🙏', '👌', '⚡', '🏆', '💯', '👀', '✍', '🤝', '🫡', '😴', '🥱', '🤷']);

describe('status reactions', () => {
  it('maps a committed turn to done, failed, or no reaction when it was stopped', () => {
    expect(reactionOfTurn('completed')).toBe('done');
    expect(reactionOfTurn('failed')).toBe('failed');
    expect(reactionOfTurn('interrupted')).toBeNull();
    expect(reactionOfTurn('cancelled')).toBeNull();
  });

  it('uses only emoji Telegram lets a bot react with', () => {
    for (const emoji of Object.values(reactionEmoji.telegram)) expect(telegramAllowed.has(emoji)).toBe(true);
  });

  it('uses Slack emoji names without colons', () => {
    expect(reactionEmoji.slack).toEqual({ queued: 'hourglass_flowing_sand', taken: 'eyes', done: 'white_check_mark', failed: 'x' });
  });

  it('plans each transition as the previous emoji removed and the next added', () => {
    expect(planReactionChange('discord', null, 'queued')).toEqual({ remove: null, add: '⏳' });
    expect(planReactionChange('discord', 'queued', 'taken')).toEqual({ remove: '⏳', add: '👀' });
    expect(planReactionChange('slack', 'taken', 'done')).toEqual({ remove: 'eyes', add: 'white_check_mark' });
    expect(planReactionChange('telegram', 'taken', 'failed')).toEqual({ remove: '👀', add: '👎' });
    expect(planReactionChange('slack', 'taken', null)).toEqual({ remove: 'eyes', add: null });
  });

  it('plans nothing when the reaction stays the same', () => {
    expect(planReactionChange('telegram', 'taken', 'taken')).toBeNull();
    expect(planReactionChange('slack', null, null)).toBeNull();
  });
});
