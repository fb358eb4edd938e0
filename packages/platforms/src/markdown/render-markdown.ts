import { Lexer, type Token, type Tokens } from 'marked';

/**
 * What one platform's markup looks like. The walk below hands each function
 * text that is already rendered (`inner`) or raw text still to be escaped
 * (`text`), so a platform only says how a construct is written, never how
 * Markdown is parsed.
 */
export interface MarkupDialect {
  escape(text: string): string;
  bold(inner: string): string;
  italic(inner: string): string;
  strike(inner: string): string;
  code(text: string): string;
  codeBlock(text: string, language: string): string;
  /** `href` is http(s) or mailto, raw; `inner` is rendered. */
  link(href: string, inner: string, autolink: boolean): string;
  /** `inner` is rendered; called once per quote (a quote inside a quote is flattened). */
  quote(inner: string): string;
}

interface WalkState {
  dialect: MarkupDialect;
  inQuote: boolean;
  inLink: boolean;
}

/** Only these schemes become links: a model's `javascript:` or `file:` link stays as its words. */
const safeHref = /^(https?:\/\/|mailto:)/i;

/**
 * Renders Markdown as a model writes it (GFM, through marked's lexer) in a
 * platform's markup. Never throws: anything the walk does not know is shown
 * as its source text, escaped.
 */
export function renderMarkdown(markdown: string, dialect: MarkupDialect): string {
  return isPlainProse(markdown) ? dialect.escape(markdown) : lexAndRender(markdown, dialect);
}

/** The whole walk, through marked's lexer; what renderMarkdown does for anything but plain prose. */
export function lexAndRender(markdown: string, dialect: MarkupDialect): string {
  let tokens: Token[];
  try {
    tokens = new Lexer({ gfm: true }).lex(markdown);
  } catch {
    return dialect.escape(markdown);
  }
  const rendered = renderBlocks(tokens, { dialect, inQuote: false, inLink: false }, '\n\n').trim();
  // Markdown that renders to nothing (a lone link definition, an unsafe link without words) would be an empty
  // message, which the platforms refuse: the reader gets the source instead.
  return rendered === '' ? dialect.escape(markdown.trim()) : rendered;
}

/**
 * Letters (any script), digits, spaces and the punctuation of ordinary prose
 * only: nothing marked reads as syntax (no `*_~\`[]<>#|&@/\\=+`, which also rules
 * out autolinks, HTML, entities and setext headings).
 */
const proseOnly = /^[\p{L}\p{N} ,.;:!?'"()\n-]*$/u;

/**
 * Text the lexer would hand back as paragraphs of text tokens, unchanged:
 * prose characters only, no line that starts with a space, digit, `-` or `:`
 * (indented code, ordered and bullet lists, rules, and a GFM table's
 * delimiter row such as `:-` under a line of text), no hard break (two spaces
 * before a newline), no run of blank lines, no `www.`, nothing to trim. Such text
 * renders as itself escaped (property-tested against the full walk), so it
 * skips the lexer: most replies are plain prose, and lexing was 2 % of an
 * instant turn's worker CPU (issue 31, docs/benchmarks.md "Where the time went").
 */
export function isPlainProse(text: string): boolean {
  return (
    text !== '' &&
    text === text.trim() &&
    proseOnly.test(text) &&
    !/(^|\n)[ \p{N}:-]/u.test(text) &&
    !text.includes('  \n') &&
    !text.includes('\n\n\n') &&
    !/ \n|\n /.test(text) &&
    // GFM links a bare www. address.
    !/www\./i.test(text)
  );
}

function renderBlocks(tokens: readonly Token[], state: WalkState, separator: string): string {
  return tokens
    .map((token) => renderBlock(token, state))
    .filter((block) => block !== '')
    .join(separator);
}

function renderBlock(token: Token, state: WalkState): string {
  const { dialect } = state;
  switch (token.type) {
    case 'space':
    case 'def':
      return '';
    case 'paragraph':
      return renderInline(token.tokens ?? [], state);
    case 'text':
      return token.tokens ? renderInline(token.tokens, state) : dialect.escape(token.text);
    case 'heading':
      // Chats have no headings: a heading reads as a bold line.
      return dialect.bold(renderInline(token.tokens ?? [], state));
    case 'code':
      return dialect.codeBlock(token.text, (token.lang ?? '').trim().split(/\s+/)[0] ?? '');
    case 'blockquote': {
      const inner = renderBlocks(token.tokens ?? [], { ...state, inQuote: true }, '\n\n');
      return state.inQuote ? inner : dialect.quote(inner);
    }
    case 'list':
      return renderList(token as Tokens.List, state);
    case 'hr':
      return '──────────';
    case 'table':
      return renderTable(token as Tokens.Table, state);
    default:
      // Raw HTML and anything unknown: the reader sees what the model wrote.
      return dialect.escape(token.raw.replace(/\n+$/, ''));
  }
}

function renderList(list: Tokens.List, state: WalkState): string {
  const start = typeof list.start === 'number' ? list.start : 1;
  return list.items
    .map((item, index) => {
      const marker = list.ordered ? `${start + index}. ` : '• ';
      const box = item.task ? (item.checked ? '☑ ' : '☐ ') : '';
      const body = renderBlocks(item.tokens.filter((t) => t.type !== 'checkbox'), state, item.loose ? '\n\n' : '\n');
      // Continuation lines (a nested list, a second paragraph) are indented under the item's text.
      return marker + box + body.replace(/\n(?=.)/g, `\n${' '.repeat(list.ordered ? 3 : 2)}`);
    })
    .join('\n');
}

function renderTable(table: Tokens.Table, state: WalkState): string {
  const row = (cells: readonly Tokens.TableCell[]) => cells.map((cell) => renderInline(cell.tokens, state)).join(' | ');
  return [row(table.header), ...table.rows.map(row)].join('\n');
}

function renderInline(tokens: readonly Token[], state: WalkState): string {
  return tokens.map((token) => renderInlineToken(token, state)).join('');
}

function renderInlineToken(token: Token, state: WalkState): string {
  const { dialect } = state;
  switch (token.type) {
    case 'text':
      return token.tokens ? renderInline(token.tokens, state) : dialect.escape(token.text);
    case 'escape':
      return dialect.escape(token.text);
    case 'strong':
      return dialect.bold(renderInline(token.tokens ?? [], state));
    case 'em':
      return dialect.italic(renderInline(token.tokens ?? [], state));
    case 'del':
      return dialect.strike(renderInline(token.tokens ?? [], state));
    case 'codespan':
      return dialect.code(token.text);
    case 'br':
      return '\n';
    case 'link': {
      const inner = renderInline(token.tokens ?? [], { ...state, inLink: true });
      const href = String(token.href ?? '').trim();
      if (state.inLink || !safeHref.test(href)) return inner;
      return dialect.link(href, inner, token.text === token.href);
    }
    case 'image': {
      const href = String(token.href ?? '').trim();
      const words = dialect.escape(token.text || href);
      return state.inLink || !safeHref.test(href) ? words : dialect.link(href, words, false);
    }
    default:
      return dialect.escape(token.raw);
  }
}
