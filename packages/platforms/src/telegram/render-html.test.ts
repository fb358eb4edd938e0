import { describe, expect, it } from 'vitest';
import { renderTelegramHtml } from './render-html.ts';

describe('renderTelegramHtml', () => {
  it('escapes what Telegram HTML reserves and keeps plain prose as it is', () => {
    expect(renderTelegramHtml('1 < 2 & 3 > 2. Done!')).toBe('1 &lt; 2 &amp; 3 &gt; 2. Done!');
  });

  it('renders code fences, inline code and bold', () => {
    expect(renderTelegramHtml('Use `a<b` and **this**:\n```ts\nconst x = 1 < 2;\n```')).toBe(
      'Use <code>a&lt;b</code> and <b>this</b>:\n<pre><code class="language-ts">const x = 1 &lt; 2;</code></pre>',
    );
  });

  it('leaves an unclosed fence as escaped text', () => {
    expect(renderTelegramHtml('```\nopen <tag>')).toBe('```\nopen &lt;tag&gt;');
  });
});
