import { describe, expect, it } from 'vitest';
import type { ConversationRun } from '../conversation-runner.ts';
import { formatTurnTag } from '../transcripts.ts';
import { checkSentOrder, type StoredUserLine } from './sent-order-check.ts';

const run = (index: number, chatId: string, turns: number): ConversationRun =>
  ({
    instance: index,
    chat: { platform: 'slack', chatId, route: 0 },
    script: { index, sourceId: `s${index}`, turns: Array.from({ length: turns }, (_, t) => ({ human: `${formatTurnTag(index, t)} hi`, reply: `${formatTurnTag(index, t)} yo` })) },
    turnCount: turns,
    records: [],
    timeouts: 0,
  }) as ConversationRun;

const line = (chatId: string, sessionId: number, eventId: number, content: string): StoredUserLine => ({
  platform: 'slack',
  chatId,
  sessionId,
  inboundEventId: eventId,
  createdAt: new Date(1_700_000_000_000 + eventId),
  content,
});

describe(checkSentOrder.name, () => {
  const runs = [run(3, 'D1', 4)];

  it('passes lines stored in the order sent, skipping compression copies and text the test never sent', () => {
    const rows = [line('D1', 1, 1, '[c3.0] hi'), line('D1', 1, 2, '[c3.1] hi'), line('D1', 2, 2, '[c3.1] hi'), line('D1', 2, 3, 'fuzz'), line('D1', 2, 4, '[c3.2] hi')];
    expect(checkSentOrder(runs, [...rows, line('D9', 5, 9, '[c7.1] x'), line('D9', 5, 8, '[c7.0] x')])).toEqual([]);
  });

  it('fails a line stored after a line sent later, even when the event ids agree with the stored order', () => {
    const rows = [line('D1', 1, 1, '[c3.0] hi'), line('D1', 1, 2, '[c3.2] hi'), line('D1', 1, 3, '[c3.1] hi')];
    expect(checkSentOrder(runs, rows)).toEqual([expect.stringMatching(/^slack:D1: line 1 stored after line 2/)]);
  });
});
