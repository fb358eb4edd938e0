import { describe, expect, it } from 'vitest';
import { MarkupError, parseHtml, parseLegacyMarkdown, parseMarkdownV2 } from './telegram-markup.ts';

function errorOf(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(MarkupError);
    return (error as Error).message;
  }
  throw new Error('expected a parse error');
}

describe('MarkdownV2', () => {
  it.each(['.', '!', '-', '(', ')', '#', '+', '=', '|', '{', '}'])('rejects an unescaped %s', (char) => {
    expect(errorOf(() => parseMarkdownV2(`a ${char} b`))).toBe(`can't parse entities: Character '${char}' is reserved and must be escaped with the preceding '\\'`);
  });

  it('accepts escaped reserved characters and strips markup', () => {
    expect(parseMarkdownV2('1\\+1\\=2\\. *bold* _it_ __under__ ~strike~ ||spoiler|| \\\\')).toBe('1+1=2. bold it under strike spoiler \\');
  });

  it('keeps code contents, where only ` and \\ are special', () => {
    expect(parseMarkdownV2('run `npm i -g x.y` then\n```ts\nconst a = (1 + 2);\n```')).toBe('run npm i -g x.y then\nconst a = (1 + 2);\n');
  });

  it('accepts links and block quotes', () => {
    expect(parseMarkdownV2('>quoted line\n[site](https://example.com/path?a=1)')).toBe('quoted line\nsite');
  });

  it('reports an unclosed entity with its byte offset', () => {
    expect(errorOf(() => parseMarkdownV2('héllo *bold'))).toBe("can't parse entities: Can't find end of Bold entity at byte offset 7");
    expect(errorOf(() => parseMarkdownV2('`code'))).toContain("Can't find end of Code entity");
  });

  it('rejects a > in the middle of a line', () => {
    expect(errorOf(() => parseMarkdownV2('a > b'))).toContain("Character '>' is reserved");
  });
});

describe('HTML', () => {
  it('decodes entities and accepts the supported tags', () => {
    expect(parseHtml('<b>a</b> <a href="https://x.y">link</a> <span class="tg-spoiler">s</span> &lt;&gt;&amp;&quot;&#33;')).toBe('a link s <>&"!');
  });

  it('rejects unknown, unclosed and mismatched tags', () => {
    expect(errorOf(() => parseHtml('<div>x</div>'))).toContain('Unsupported start tag "div"');
    expect(errorOf(() => parseHtml('<b>x'))).toContain('Can\'t find end tag corresponding to start tag "b"');
    expect(errorOf(() => parseHtml('<b><i>x</b></i>'))).toContain('Unmatched end tag');
    expect(errorOf(() => parseHtml('a < b'))).toContain('Unsupported start tag');
  });
});

describe('legacy Markdown', () => {
  it('strips entities and rejects an unclosed one', () => {
    expect(parseLegacyMarkdown('*bold* _it_ `code` [t](http://x) 1.5!')).toBe('bold it code t 1.5!');
    expect(errorOf(() => parseLegacyMarkdown('snake_case'))).toContain("Can't find end of the entity starting at byte offset 5");
  });
});
