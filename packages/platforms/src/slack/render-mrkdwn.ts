import { renderMarkdown, type MarkupDialect } from '../markdown/render-markdown.ts';
import { escapeSlackText } from './escape-text.ts';

/** In a `<url|label>` the URL ends at `|` or `>`: both are percent-encoded so a model's URL cannot grow a label or a mention. */
const escapeSlackUrl = (href: string) => escapeSlackText(href.replace(/\|/g, '%7C'));

export const slackMrkdwn: MarkupDialect = {
  escape: escapeSlackText,
  bold: (inner) => `*${inner}*`,
  italic: (inner) => `_${inner}_`,
  strike: (inner) => `~${inner}~`,
  code: (text) => `\`${escapeSlackText(text)}\``,
  // Slack's code blocks have no language: the language line is dropped rather than shown as code.
  codeBlock: (text) => `\`\`\`\n${escapeSlackText(text)}\n\`\`\``,
  link: (href, inner, autolink) => (autolink ? `<${escapeSlackUrl(href)}>` : `<${escapeSlackUrl(href)}|${inner}>`),
  quote: (inner) => inner.split('\n').map((line) => `> ${line}`).join('\n'),
};

/**
 * Renders the Markdown a model writes as Slack mrkdwn (`*bold*`, `_italic_`,
 * `~strike~`, code, `<url|text>` for http(s)/mailto, "• " lists, `> `
 * quotes, headings as bold lines). Every `& < >` of the model's own text is
 * escaped, so it can never write `<!channel>` or a user mention.
 */
export function renderSlackMrkdwn(markdown: string): string {
  return renderMarkdown(markdown, slackMrkdwn);
}
