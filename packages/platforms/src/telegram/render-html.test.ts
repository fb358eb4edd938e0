import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { measureTelegramHtml, renderTelegramHtml } from './render-html.ts';

describe('renderTelegramHtml', () => {
  it('escapes what Telegram HTML reserves and keeps plain prose as it is', () => {
    expect(renderTelegramHtml('1 < 2 & 3 > 2. Done!')).toBe('1 &lt; 2 &amp; 3 &gt; 2. Done!');
    expect(renderTelegramHtml('a < b && c > d')).toBe('a &lt; b &amp;&amp; c &gt; d');
    expect(renderTelegramHtml('<b>not markup</b> &amp;')).toBe('&lt;b&gt;not markup&lt;/b&gt; &amp;amp;');
  });

  it('renders bold, italic, strikethrough, inline code and code fences with their language', () => {
    expect(renderTelegramHtml('Use `a<b` and **this**, *that* and ~~gone~~:\n```ts\nconst x = 1 < 2;\n```')).toBe(
      'Use <code>a&lt;b</code> and <b>this</b>, <i>that</i> and <s>gone</s>:\n\n<pre><code class="language-ts">const x = 1 &lt; 2;</code></pre>',
    );
    expect(renderTelegramHtml('```\nplain & code\n```')).toBe('<pre>plain &amp; code</pre>');
  });

  it('links http(s) and mailto only; other schemes stay as their words', () => {
    expect(renderTelegramHtml('[docs](https://e.com/?a=1&b="2")')).toBe('<a href="https://e.com/?a=1&amp;b=&quot;2&quot;">docs</a>');
    expect(renderTelegramHtml('mail [me](mailto:a@b.c)')).toBe('mail <a href="mailto:a@b.c">me</a>');
    expect(renderTelegramHtml('[click](javascript:alert(1)) [f](file:///etc/passwd)')).toBe('click f');
    expect(renderTelegramHtml('see https://e.com/x')).toBe('see <a href="https://e.com/x">https://e.com/x</a>');
  });

  it('renders lists as bullet and number lines, nested lists indented', () => {
    expect(renderTelegramHtml('- one\n  - two\n- **three**\n\n3. x\n4. y')).toBe('• one\n  • two\n• <b>three</b>\n\n3. x\n4. y');
  });

  it('renders quotes, headings as bold, and nesting', () => {
    expect(renderTelegramHtml('# Title\n\n> quoted **bold _both_**\n> > inner')).toBe(
      '<b>Title</b>\n\n<blockquote>quoted <b>bold <i>both</i></b>\n\ninner</blockquote>',
    );
  });

  it('leaves unbalanced markers and an unclosed fence as escaped text, balanced', () => {
    expect(renderTelegramHtml('**not closed & <x>')).toBe('**not closed &amp; &lt;x&gt;');
    expect(renderTelegramHtml('```\nopen <tag>')).toBe('<pre>open &lt;tag&gt;</pre>');
  });

  it('counts what Telegram counts: the text without tags, each entity one character', () => {
    expect(measureTelegramHtml(renderTelegramHtml('**a** & [b](https://e.com)'))).toBe('a & b'.length);
  });

  it('never throws and always yields balanced HTML with only the tags it writes', () => {
    const markdownish = fc.array(fc.constantFrom('*', '_', '`', '~', '[', ']', '(', ')', '<', '>', '&', '#', '-', '1.', ' ', '\n', 'a', 'b', '```', 'http://x.y', '"', '|', '\\', '> ', '    '), { maxLength: 120 }).map((pieces) => pieces.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.string(), markdownish), (markdown) => {
        expect(isBalancedTelegramHtml(renderTelegramHtml(markdown))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

/** Tags nest and close in order, only Telegram's names appear, and no bare `<` or `&` is left in text. */
function isBalancedTelegramHtml(html: string): boolean {
  const open: string[] = [];
  for (const match of html.matchAll(/<(\/?)([a-z]+)[^>]*>|<|&(?!(?:lt|gt|amp|quot);)/g)) {
    if (match[2] === undefined) return false;
    if (!['b', 'i', 's', 'code', 'pre', 'a', 'blockquote'].includes(match[2])) return false;
    if (match[1] === '/') {
      if (open.pop() !== match[2]) return false;
    } else open.push(match[2]);
  }
  return open.length === 0;
}
