/**
 * Parses a message text the way the Bot API does for each parse_mode and
 * returns the plain text the user would see, or throws MarkupError with the
 * Bot API's wording. Only validation and stripping: entities are not built,
 * since nothing downstream of the sim reads them.
 */

export type ParseMode = 'MarkdownV2' | 'Markdown' | 'HTML';

export class MarkupError extends Error {
  readonly code = 'TELEGRAM_CANT_PARSE_ENTITIES';
  constructor(detail: string) {
    super(`can't parse entities: ${detail}`);
    this.name = 'MarkupError';
  }
}

export function isParseMode(value: unknown): value is ParseMode {
  return value === 'MarkdownV2' || value === 'Markdown' || value === 'HTML';
}

/** Returns the visible text of `text` under `mode` (the text itself when there is no mode). */
export function renderPlainText(text: string, mode: ParseMode | undefined): string {
  if (mode === 'MarkdownV2') return parseMarkdownV2(text);
  if (mode === 'Markdown') return parseLegacyMarkdown(text);
  if (mode === 'HTML') return parseHtml(text);
  return text;
}

// Telegram reports positions as UTF-8 byte offsets.
function byteOffset(text: string, index: number): number {
  return Buffer.byteLength(text.slice(0, index), 'utf8');
}

const reservedV2 = new Set(['_', '*', '[', ']', '(', ')', '~', '`', '>', '#', '+', '-', '=', '|', '{', '}', '.', '!']);

function reservedCharacter(char: string): MarkupError {
  return new MarkupError(`Character '${char}' is reserved and must be escaped with the preceding '\\'`);
}

interface OpenEntity {
  kind: 'Bold' | 'Italic' | 'Underline' | 'Strikethrough' | 'Spoiler' | 'TextUrl' | 'CustomEmoji';
  index: number;
}

/** Where a MarkdownV2 parse stands: the position, the visible text so far, and the entities still open. */
interface V2Cursor {
  text: string;
  index: number;
  out: string;
  open: OpenEntity[];
}

/** MarkdownV2 (Bot API "Formatting options"): every reserved character outside markup must be escaped. */
export function parseMarkdownV2(text: string): string {
  const cursor: V2Cursor = { text, index: 0, out: '', open: [] };
  let atLineStart = true;
  while (cursor.index < text.length) {
    const char = text[cursor.index] as string;
    const lineStart = atLineStart;
    atLineStart = char === '\n';
    if (readEscapeOrCode(cursor, char) || skipQuoteMarker(cursor, lineStart) || readStyleMarker(cursor, char) || readLinkMarker(cursor, char)) continue;
    if (reservedV2.has(char)) throw reservedCharacter(char);
    cursor.out += char;
    cursor.index += 1;
  }
  const unclosed = cursor.open[cursor.open.length - 1];
  if (unclosed) throw new MarkupError(`Can't find end of ${unclosed.kind} entity at byte offset ${byteOffset(text, unclosed.index)}`);
  return cursor.out;
}

/** '\\' makes the next ASCII character plain; '`' starts code or a ``` block, whose content is shown as written. */
function readEscapeOrCode(cursor: V2Cursor, char: string): boolean {
  const { text, index } = cursor;
  if (char === '\\') {
    const next = text[index + 1];
    const code = next === undefined ? 0 : next.charCodeAt(0);
    if (code < 1 || code > 126) throw reservedCharacter('\\');
    cursor.out += next;
    cursor.index += 2;
    return true;
  }
  if (char !== '`') return false;
  const result = readCode(text, index, text.startsWith('```', index));
  cursor.out += result.content;
  cursor.index = result.end;
  return true;
}

/** Block quotation markers at the start of a line show nothing. */
function skipQuoteMarker(cursor: V2Cursor, lineStart: boolean): boolean {
  if (!lineStart) return false;
  if (cursor.text.startsWith('**>', cursor.index)) {
    cursor.index += 3; // expandable block quotation
    return true;
  }
  if (cursor.text[cursor.index] === '>') {
    cursor.index += 1; // block quotation line
    return true;
  }
  return false;
}

/** Bold '*', italic '_', underline '__', strikethrough '~' and spoiler '||' each open or close their entity. */
function readStyleMarker(cursor: V2Cursor, char: string): boolean {
  const next = cursor.text[cursor.index + 1];
  if (char === '*') toggle(cursor, 'Bold', 1);
  else if (char === '_' && next === '_') toggle(cursor, 'Underline', 2);
  else if (char === '_') toggle(cursor, 'Italic', 1);
  else if (char === '~') toggle(cursor, 'Strikethrough', 1);
  else if (char === '|' && next === '|') toggle(cursor, 'Spoiler', 2);
  else return false;
  return true;
}

/** Closes `kind` when it is the innermost open entity, opens it when it is not open; closing across another entity is an error. */
function toggle(cursor: V2Cursor, kind: OpenEntity['kind'], width: number): void {
  const { open, text, index } = cursor;
  const top = open[open.length - 1];
  if (top?.kind === kind) open.pop();
  else if (open.some((entity) => entity.kind === kind)) {
    throw new MarkupError(`Can't find end of ${top?.kind ?? kind} entity at byte offset ${byteOffset(text, top?.index ?? index)}`);
  } else open.push({ kind, index });
  cursor.index += width;
}

/** '[text](url)' and '![emoji](tg://emoji?id=…)': the brackets open and close an entity, the target in '(…)' is not shown. */
function readLinkMarker(cursor: V2Cursor, char: string): boolean {
  const { text, index, open } = cursor;
  const next = text[index + 1];
  if (char === '[') {
    open.push({ kind: 'TextUrl', index });
    cursor.index += 1;
    return true;
  }
  if (char === '!' && next === '[') {
    open.push({ kind: 'CustomEmoji', index });
    cursor.index += 2;
    return true;
  }
  if (char !== ']') return false;
  const top = open[open.length - 1];
  if (top?.kind !== 'TextUrl' && top?.kind !== 'CustomEmoji') throw reservedCharacter(']');
  open.pop();
  if (next !== '(') {
    if (top.kind === 'CustomEmoji') throw new MarkupError(`Custom emoji entity must contain a tg://emoji URL`);
    cursor.index += 1; // "[text]" without a URL is kept as plain text
    return true;
  }
  cursor.index = skipLinkTarget(text, index + 2);
  return true;
}

// Inside code only '`' and '\' are special; a fence may start with a language line.
function readCode(text: string, start: number, fence: boolean): { content: string; end: number } {
  let index = start + (fence ? 3 : 1);
  let content = '';
  while (index < text.length) {
    const char = text[index] as string;
    if (char === '\\' && index + 1 < text.length) {
      content += text[index + 1];
      index += 2;
      continue;
    }
    if (char === '`' && (!fence || text.startsWith('```', index))) {
      if (fence) {
        const firstBreak = content.indexOf('\n');
        if (firstBreak >= 0 && /^[A-Za-z0-9_+-]*$/.test(content.slice(0, firstBreak))) content = content.slice(firstBreak + 1);
      }
      return { content, end: index + (fence ? 3 : 1) };
    }
    content += char;
    index += 1;
  }
  throw new MarkupError(`Can't find end of ${fence ? 'Pre' : 'Code'} entity at byte offset ${byteOffset(text, start)}`);
}

// Inside "(...)" of a link only ')' and '\' must be escaped.
function skipLinkTarget(text: string, start: number): number {
  let index = start;
  while (index < text.length) {
    const char = text[index];
    if (char === '\\') index += 2;
    else if (char === ')') return index + 1;
    else index += 1;
  }
  throw new MarkupError(`Can't find end of a URL at byte offset ${byteOffset(text, start)}`);
}

/** Legacy Markdown: no nesting, and an entity that is never closed is an error. */
export function parseLegacyMarkdown(text: string): string {
  let out = '';
  let index = 0;
  while (index < text.length) {
    const char = text[index] as string;
    if (char === '\\' && '_*`['.includes(text[index + 1] ?? '')) {
      out += text[index + 1];
      index += 2;
      continue;
    }
    if (char === '*' || char === '_' || char === '`') {
      const marker = char === '`' && text.startsWith('```', index) ? '```' : char;
      const close = text.indexOf(marker, index + marker.length);
      if (close < 0) throw new MarkupError(`Can't find end of the entity starting at byte offset ${byteOffset(text, index)}`);
      out += text.slice(index + marker.length, close);
      index = close + marker.length;
      continue;
    }
    if (char === '[') {
      const match = /^\[([^\]]*)\]\(([^)]*)\)/.exec(text.slice(index));
      if (!match) throw new MarkupError(`Can't find end of the entity starting at byte offset ${byteOffset(text, index)}`);
      out += match[1];
      index += match[0].length;
      continue;
    }
    out += char;
    index += 1;
  }
  return out;
}

const htmlTags = new Set(['b', 'strong', 'i', 'em', 'u', 'ins', 's', 'strike', 'del', 'span', 'tg-spoiler', 'a', 'code', 'pre', 'blockquote', 'tg-emoji']);
const namedEntities: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

/** HTML: only the Bot API's tag list, properly nested; '<' must otherwise be written as &lt;. */
export function parseHtml(text: string): string {
  const open: Array<{ name: string; index: number }> = [];
  let out = '';
  let index = 0;
  while (index < text.length) {
    const char = text[index] as string;
    if (char === '<') {
      const tag = /^<(\/?)([A-Za-z][A-Za-z0-9-]*)((?:\s[^<>]*)?)>/.exec(text.slice(index));
      if (!tag) {
        const name = /^<\/?([^\s>]*)/.exec(text.slice(index))?.[1] ?? '';
        throw new MarkupError(`Unsupported start tag "${name}" at byte offset ${byteOffset(text, index)}`);
      }
      const [whole, slash, rawName, attributes] = tag as unknown as [string, string, string, string];
      const name = rawName.toLowerCase();
      if (slash) {
        const top = open.pop();
        if (!top) throw new MarkupError(`Unexpected end tag at byte offset ${byteOffset(text, index)}`);
        if (top.name !== name) {
          throw new MarkupError(`Unmatched end tag at byte offset ${byteOffset(text, index)}, expected "</${top.name}>", found "</${name}>"`);
        }
      } else {
        if (!htmlTags.has(name)) throw new MarkupError(`Unsupported start tag "${name}" at byte offset ${byteOffset(text, index)}`);
        if (name === 'span' && !/class\s*=\s*["']?tg-spoiler/.test(attributes)) {
          throw new MarkupError(`Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(text, index)}`);
        }
        open.push({ name, index });
      }
      index += whole.length;
      continue;
    }
    if (char === '&') {
      const entity = /^&(#\d{1,7}|#x[0-9A-Fa-f]{1,6}|[A-Za-z]+);/.exec(text.slice(index));
      const decoded = entity ? decodeEntity(entity[1] as string) : undefined;
      if (entity && decoded !== undefined) {
        out += decoded;
        index += entity[0].length;
        continue;
      }
    }
    out += char;
    index += 1;
  }
  const unclosed = open[open.length - 1];
  if (unclosed) throw new MarkupError(`Can't find end tag corresponding to start tag "${unclosed.name}"`);
  return out;
}

function decodeEntity(body: string): string | undefined {
  if (body.startsWith('#x')) return safeCodePoint(Number.parseInt(body.slice(2), 16));
  if (body.startsWith('#')) return safeCodePoint(Number.parseInt(body.slice(1), 10));
  return namedEntities[body.toLowerCase()];
}

function safeCodePoint(code: number): string | undefined {
  return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
}
