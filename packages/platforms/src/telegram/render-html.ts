const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Renders the markdown a model usually writes (code fences, inline code,
 * **bold**) as Telegram HTML, escaping everything else. HTML rather than
 * MarkdownV2 because HTML only needs three characters escaped, where
 * MarkdownV2 reserves eighteen that models use in ordinary prose.
 */
export function renderTelegramHtml(markdown: string): string {
  const parts = markdown.split(/(```[^\n`]*\n[\s\S]*?```)/g);
  return parts
    .map((part) => {
      const fence = /^```([^\n`]*)\n([\s\S]*?)```$/.exec(part);
      if (fence) {
        const language = (fence[1] ?? '').trim();
        const code = escapeHtml((fence[2] ?? '').replace(/\n$/, ''));
        return language ? `<pre><code class="language-${escapeHtml(language)}">${code}</code></pre>` : `<pre>${code}</pre>`;
      }
      return part
        .split(/(`[^`\n]+`)/g)
        .map((piece) => {
          if (/^`[^`\n]+`$/.test(piece)) return `<code>${escapeHtml(piece.slice(1, -1))}</code>`;
          return escapeHtml(piece).replace(/\*\*([^*\n]+)\*\*/g, '<b>$1</b>');
        })
        .join('');
    })
    .join('');
}
