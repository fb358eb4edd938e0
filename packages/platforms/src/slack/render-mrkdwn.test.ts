import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderSlackMrkdwn } from './render-mrkdwn.ts';

describe('renderSlackMrkdwn', () => {
  it('escapes & < > so the model can never write a mention or a broadcast', () => {
    expect(renderSlackMrkdwn('a < b && c > d')).toBe('a &lt; b &amp;&amp; c &gt; d');
    expect(renderSlackMrkdwn('<!channel> hi <@U123>')).toBe('&lt;!channel&gt; hi &lt;@U123&gt;');
  });

  it('renders bold, italic, strikethrough, inline code and code blocks', () => {
    expect(renderSlackMrkdwn('**bold**, *it*, _it2_, ~~gone~~, `a<b`')).toBe('*bold*, _it_, _it2_, ~gone~, `a&lt;b`');
    expect(renderSlackMrkdwn('```python\nif a < b:\n    pass\n```')).toBe('```\nif a &lt; b:\n    pass\n```');
  });

  it('links http(s) and mailto as <url|text>; other schemes stay as their words', () => {
    expect(renderSlackMrkdwn('[docs](https://e.com/?a=1&b=2|x)')).toBe('<https://e.com/?a=1&amp;b=2%7Cx|docs>');
    expect(renderSlackMrkdwn('see https://e.com/x')).toBe('see <https://e.com/x>');
    expect(renderSlackMrkdwn('[me](mailto:a@b.c) [x](javascript:alert(1))')).toBe('<mailto:a@b.c|me> x');
  });

  it('renders lists, quotes and headings', () => {
    expect(renderSlackMrkdwn('## Plan\n\n1. first\n2. **second**\n\n- a\n  - b\n\n> line one\n> line two')).toBe(
      '*Plan*\n\n1. first\n2. *second*\n\n• a\n  • b\n\n> line one\n> line two',
    );
  });

  it('never renders non-blank Markdown as an empty message', () => {
    expect(renderSlackMrkdwn('[x]: https://e.com')).toBe('[x]: https://e.com');
  });

  it('leaves unbalanced markers as text', () => {
    expect(renderSlackMrkdwn('**half & <open>')).toBe('**half &amp; &lt;open&gt;');
  });

  it('never throws and never leaves a bare < or & of the model in the output', () => {
    fc.assert(
      fc.property(fc.string(), (markdown) => {
        const rendered = renderSlackMrkdwn(markdown);
        // The only `<` the renderer writes opens a link to an http(s) or mailto URL.
        for (const match of rendered.matchAll(/<([^>]*)>?/g)) expect(match[1]).toMatch(/^(https?:\/\/|mailto:)[^<>]*$/i);
        expect(rendered).not.toMatch(/&(?!(?:lt|gt|amp);)/);
      }),
      { numRuns: 2000 },
    );
  });
});
