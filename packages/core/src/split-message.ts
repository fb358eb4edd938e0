const fenceLine = /^\s*(`{3,}|~{3,})(.*)$/;
const closeFence = '\n```';

/**
 * Splits a reply into platform-sized parts: at a paragraph break
 * if there is one in the second half of the window, else a line break, else a
 * space, else a hard cut. A part that would end inside a code fence is closed
 * with ``` and the next part reopens it with the same opener (language kept),
 * so every part renders as valid markdown on its own.
 *
 * `fits` says whether a part still fits once the platform renders it (its
 * markup can be longer than the Markdown): a part that does not is split
 * again, smaller, until it does or reaches the smallest limit. Splitting the
 * source rather than the rendered text means no tag or entity is ever cut.
 */
export function splitMessage(text: string, limit: number, fits?: (part: string) => boolean): string[] {
  if (!Number.isInteger(limit) || limit < minLimit) throw new RangeError(`splitMessage limit must be an integer >= ${minLimit}, got ${limit}`);
  const parts = splitByLength(text, limit);
  return fits ? parts.flatMap((part) => fitPart(part, limit, fits)) : parts;
}

const minLimit = 32;

function fitPart(part: string, limit: number, fits: (part: string) => boolean): string[] {
  if (limit <= minLimit || fits(part)) return [part];
  const smaller = Math.max(minLimit, Math.floor((limit * 3) / 4));
  return splitByLength(part, smaller).flatMap((piece) => fitPart(piece, smaller, fits));
}

function splitByLength(text: string, limit: number): string[] {
  const parts: string[] = [];
  let rest = text;
  let reopen = '';
  while (rest.length > 0) {
    const prefix = reopen ? `${reopen}\n` : '';
    if (prefix.length + rest.length <= limit) {
      parts.push(prefix + rest);
      break;
    }
    const budget = Math.max(1, limit - prefix.length - closeFence.length);
    const cut = findBreak(rest, budget);
    const body = rest.slice(0, cut).replace(/\s+$/, '');
    const open = findOpenFence(prefix + body);
    parts.push(open ? `${prefix}${body}${closeFence}` : prefix + body);
    rest = rest.slice(cut).replace(/^\s*\n/, '');
    reopen = open ?? '';
  }
  return parts.filter((part) => part.trim().length > 0);
}

function findBreak(text: string, budget: number): number {
  const window = text.slice(0, budget + 1);
  const paragraph = window.lastIndexOf('\n\n');
  if (paragraph >= budget / 2) return paragraph;
  const line = window.lastIndexOf('\n');
  if (line >= budget / 3) return line;
  const space = window.lastIndexOf(' ');
  if (space >= budget / 3) return space + 1;
  // Never leave half of a surrogate pair at the end of a part.
  const code = text.charCodeAt(budget - 1);
  return code >= 0xd800 && code <= 0xdbff && budget > 1 ? budget - 1 : budget;
}

/** The opener line (e.g. "```ts") of a fence left open at the end of `text`, or null. */
function findOpenFence(text: string): string | null {
  let open: string | null = null;
  for (const line of text.split('\n')) {
    const match = fenceLine.exec(line);
    if (!match) continue;
    if (open === null) open = line.trim();
    else if (match[2]?.trim() === '') open = null;
  }
  return open;
}
