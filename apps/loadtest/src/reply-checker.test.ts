import { describe, expect, it } from 'vitest';
import type { ConversationRun, TurnRecord } from './conversation-runner.ts';
import type { BotReply, PlatformName } from './drivers/platform-driver.ts';
import { checkConversationReplies, createReplyCounts } from './reply-checker.ts';
import { formatTurnTag } from './transcripts.ts';

const turns = [0, 1, 2, 3].map((turn) => ({ human: `${formatTurnTag(7, turn)} human ${turn}`, reply: `${formatTurnTag(7, turn)} bot ${turn}` }));

function makeRun(sentAt: number[], repliedAt: (number | undefined)[] = [], platform: PlatformName = 'telegram', script = turns): ConversationRun {
  const records: TurnRecord[] = sentAt.map((at, turn) => ({ turn, sentAt: at, delivered: true, status: 200, ackMs: 1, burst: false, ...(repliedAt[turn] !== undefined ? { repliedAt: repliedAt[turn] } : {}) }));
  return { instance: 0, script: { index: 7, sourceId: 't', turns: script }, chat: { platform, chatId: '42', route: 0 }, turnCount: records.length, records, timeouts: 0 };
}

const reply = (order: number, turn: number, text = turns[turn]?.reply ?? ''): BotReply => ({ order, text, at: 1000 + order });

describe(checkConversationReplies.name, () => {
  it('counts nothing wrong when every reply came once, in order', () => {
    const counts = createReplyCounts();
    const problems: never[] = [];
    checkConversationReplies(makeRun([0, 10, 20, 30]), [reply(1, 0), reply(2, 1), reply(3, 2), reply(4, 3)], 'queue', { counts, problems });
    expect(counts).toEqual({ expected: 4, received: 4, lost: 0, duplicated: 0, outOfOrder: 0, mismatched: 0, unexpected: 0, superseded: 0 });
    expect(problems).toEqual([]);
  });

  it('finds a lost, a duplicated, an out-of-order, a mismatched and an unexpected reply', () => {
    const counts = createReplyCounts();
    const problems: Parameters<typeof checkConversationReplies>[3]['problems'] = [];
    const replies = [reply(1, 0), reply(2, 2), reply(3, 1), reply(4, 2), reply(5, 0, `${formatTurnTag(7, 0)} wrong`), reply(6, 0, 'Sorry, something went wrong')];
    checkConversationReplies(makeRun([0, 10, 20, 30]), replies, 'queue', { counts, problems });
    expect(counts).toMatchObject({ expected: 4, received: 5, lost: 1, duplicated: 2, outOfOrder: 1, mismatched: 0, unexpected: 1 });
    expect(problems.map((p) => p.kind).sort()).toEqual(['duplicated', 'duplicated', 'lost', 'out-of-order', 'unexpected']);
  });

  it('counts a wrong text under a known tag as mismatched', () => {
    const counts = createReplyCounts();
    checkConversationReplies(makeRun([0]), [reply(1, 0, `${formatTurnTag(7, 0)} something else`)], 'queue', { counts, problems: [] });
    expect(counts).toMatchObject({ received: 1, mismatched: 1, lost: 0 });
  });

  it('does not owe a reply to a line cut short by the next one in interrupt mode, but does in queue mode', () => {
    // Turn 1 was followed by turn 2 before any reply to it came (a burst).
    const run = makeRun([0, 10, 11], [5, undefined, 40]);
    const interrupt = createReplyCounts();
    checkConversationReplies(run, [reply(1, 0), reply(2, 2)], 'interrupt', { counts: interrupt, problems: [] });
    expect(interrupt).toMatchObject({ expected: 2, lost: 0, superseded: 1 });
    const queue = createReplyCounts();
    checkConversationReplies(run, [reply(1, 0), reply(2, 2)], 'queue', { counts: queue, problems: [] });
    expect(queue).toMatchObject({ expected: 3, lost: 1, superseded: 0 });
  });

  // A recorded line with Markdown, as the transcripts hold (chaos-short once failed on "A *canadian*").
  const formatted = [{ human: `${formatTurnTag(7, 0)} who?`, reply: `${formatTurnTag(7, 0)} A *canadian* & **1 < 2**` }];
  const posted: Record<PlatformName, string> = {
    telegram: `${formatTurnTag(7, 0)} A <i>canadian</i> &amp; <b>1 &lt; 2</b>`,
    slack: `${formatTurnTag(7, 0)} A _canadian_ &amp; *1 &lt; 2*`,
    discord: `${formatTurnTag(7, 0)} A *canadian* & **1 < 2**`,
  };

  it.each(['telegram', 'slack', 'discord'] as const)('%s: matches a reply posted as the platform formats the recorded Markdown', (platform) => {
    const counts = createReplyCounts();
    checkConversationReplies(makeRun([0], [], platform, formatted), [reply(1, 0, posted[platform])], 'queue', { counts, problems: [] });
    expect(counts).toMatchObject({ received: 1, mismatched: 0, lost: 0, unexpected: 0 });
  });

  it.each(['telegram', 'slack', 'discord'] as const)('%s: still counts a formatted reply with other words as mismatched', (platform) => {
    const counts = createReplyCounts();
    const wrong = posted[platform].replace('canadian', 'american');
    checkConversationReplies(makeRun([0], [], platform, formatted), [reply(1, 0, wrong)], 'queue', { counts, problems: [] });
    expect(counts).toMatchObject({ received: 1, mismatched: 1 });
  });

  it.each(['telegram', 'slack'] as const)('%s: counts the Markdown posted unformatted as mismatched', (platform) => {
    const counts = createReplyCounts();
    checkConversationReplies(makeRun([0], [], platform, formatted), [reply(1, 0, formatted[0]?.reply)], 'queue', { counts, problems: [] });
    expect(counts).toMatchObject({ received: 1, mismatched: 1 });
  });
});
