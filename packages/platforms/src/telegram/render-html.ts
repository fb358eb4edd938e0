import { renderMarkdown, type MarkupDialect } from '../markdown/render-markdown.ts';

/** Telegram HTML reserves only these three in text (Bot API, "HTML style"). */
const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttribute = (text: string) => escapeHtml(text).replace(/"/g, '&quot;');

export const telegramHtml: MarkupDialect = {
  escape: escapeHtml,
  bold: (inner) => `<b>${inner}</b>`,
  italic: (inner) => `<i>${inner}</i>`,
  strike: (inner) => `<s>${inner}</s>`,
  code: (text) => `<code>${escapeHtml(text)}</code>`,
  codeBlock: (text, language) =>
    language ? `<pre><code class="language-${escapeAttribute(language)}">${escapeHtml(text)}</code></pre>` : `<pre>${escapeHtml(text)}</pre>`,
  link: (href, inner) => `<a href="${escapeAttribute(href)}">${inner}</a>`,
  quote: (inner) => `<blockquote>${inner}</blockquote>`,
};

/**
 * Renders the Markdown a model writes as Telegram HTML: bold, italic,
 * strikethrough, code, pre with its language, http(s)/mailto links, lists as
 * "• " and "1. " lines, quotes, headings as bold lines. HTML rather than
 * MarkdownV2 because HTML only needs three characters escaped, where
 * MarkdownV2 reserves eighteen that models use in ordinary prose.
 */
export function renderTelegramHtml(markdown: string): string {
  return renderMarkdown(markdown, telegramHtml);
}

/** How many characters Telegram counts for rendered HTML: its limit applies to the text once the tags are parsed away. */
export function measureTelegramHtml(html: string): number {
  return html.replace(/<[^>]*>/g, '').replace(/&(?:lt|gt|amp|quot);/g, '.').length;
}
