import { splitMessage } from '@switchboard/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSlackSender } from '../slack/slack-sender.ts';
import { renderSlackMrkdwn } from '../slack/render-mrkdwn.ts';
import { createTelegramSender } from '../telegram/telegram-sender.ts';
import { measureTelegramHtml, renderTelegramHtml } from '../telegram/render-html.ts';

// Nothing is sent: only the senders' limits and fit checks are used.
const piece = fc.constantFrom('**b** ', '_i_ ', '`c<d` ', '[l](https://e.com/&) ', '- item\n', '1. one\n', '> q\n', '```ts\nx < 1\n```\n', '&&&& ', '\n\n', 'word ', '# h\n');
const markdown = fc.array(piece, { maxLength: 400 }).map((pieces) => pieces.join(''));

describe('splitting the Markdown, then rendering each part', () => {
  it('keeps every Telegram part within the limit Telegram counts, and renders each balanced', () => {
    fc.assert(
      fc.property(markdown, fc.integer({ min: 32, max: 400 }), (text, limit) => {
        const sender = createTelegramSender({ token: '1:x', apiRoot: 'http://127.0.0.1:9', messageLimit: limit });
        for (const part of splitMessage(text, sender.messageLimit, sender.fitsOneMessage)) {
          expect(part.length).toBeLessThanOrEqual(limit);
          expect(measureTelegramHtml(renderTelegramHtml(part))).toBeLessThanOrEqual(limit);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps every Slack part within Slack hard limit once rendered', () => {
    const sender = createSlackSender({ token: 'xoxb-x', apiUrl: 'http://127.0.0.1:9/api/' });
    fc.assert(
      fc.property(markdown, (text) => {
        for (const part of splitMessage(text, sender.messageLimit, sender.fitsOneMessage)) {
          expect(part.length).toBeLessThanOrEqual(sender.messageLimit);
          expect(renderSlackMrkdwn(part).length).toBeLessThanOrEqual(40_000);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('splits again a part whose rendering grew past the limit', () => {
    // "1." repeated renders as 1..n: past 9 each number is longer than its source.
    const list = Array.from({ length: 30 }, () => '1. x').join('\n');
    const sender = createTelegramSender({ token: '1:x', apiRoot: 'http://127.0.0.1:9', messageLimit: list.length });
    expect(sender.fitsOneMessage?.(list)).toBe(false);
    const parts = splitMessage(list, sender.messageLimit, sender.fitsOneMessage);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(measureTelegramHtml(renderTelegramHtml(part))).toBeLessThanOrEqual(list.length);
  });
});
