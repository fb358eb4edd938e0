import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { slackMrkdwn } from '../slack/render-mrkdwn.ts';
import { telegramHtml } from '../telegram/render-html.ts';
import { isPlainProse, lexAndRender, renderMarkdown } from './render-markdown.ts';

// Plain prose skips marked's lexer (issue 31): the output must be exactly what the whole walk gives.
const proseish = fc
  .array(fc.constantFrom('a', 'Z', 'é', 'ж', '語', '7', ' ', '  ', ',', '.', ';', ':', '!', '?', "'", '"', '(', ')', '-', '\n', '\n\n', '\n\n\n', '*', '_', '#', '>', '`', '&', '<', '/', 'www.', '1.', '- ', '    '), { maxLength: 40 })
  .map((parts) => parts.join(''));

describe('isPlainProse (the lexer skipped for plain prose)', () => {
  it('renders what it lets through exactly as the whole walk does, in every dialect', () => {
    let through = 0;
    fc.assert(
      fc.property(proseish, (text) => {
        if (!isPlainProse(text)) return;
        through++;
        for (const dialect of [telegramHtml, slackMrkdwn]) expect(renderMarkdown(text, dialect)).toBe(lexAndRender(text, dialect));
      }),
      { numRuns: 3000 },
    );
    // The generator must reach the fast path often enough to mean something.
    expect(through).toBeGreaterThan(100);
  });

  it('takes ordinary replies and leaves anything that looks like syntax to the lexer', () => {
    expect(isPlainProse("echo: I think it's true, isn't it? (Yes.)\n\nSecond paragraph: fine!")).toBe(true);
    for (const text of ['**bold**', 'a_b', '1. first', '- item', '    code', 'see www.example.com', 'a@b.co', 'x  \ny', 'a\n\n\nb', ' lead', 'tail ', '', 'Title\n===', 'a < b', 'AT&T', 'a\n:-', 'a\n:-:']) {
      expect(isPlainProse(text), text).toBe(false);
    }
  });
});
