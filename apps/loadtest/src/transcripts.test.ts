import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildReplyLookup, loadTranscripts, parseTurnTag } from './transcripts.ts';

function writeTranscripts(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'sb-transcripts-')), 't.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
}

describe(loadTranscripts.name, () => {
  it('pairs human lines with the recorded replies, tags them, joins runs and drops an unanswered last line', () => {
    const path = writeTranscripts({
      a: {
        content: [
          { agent: 'agent_2', message: 'bot opens' },
          { agent: 'agent_1', message: ' hi there ' },
          { agent: 'agent_2', message: 'hello' },
          { agent: 'agent_2', message: 'how are you?' },
          { agent: 'agent_1', message: 'fine' },
          { agent: 'agent_1', message: 'and you' },
          { agent: 'agent_2', message: 'great' },
          { agent: 'agent_1', message: 'bye' },
        ],
      },
      b: { content: [{ agent: 'agent_1', message: 'only me' }] },
      c: { content: [{ agent: 'agent_1', message: 'q' }, { agent: 'agent_2', message: 'a' }] },
    });
    const conversations = loadTranscripts(path);
    expect(conversations.map((c) => [c.sourceId, c.index])).toEqual([
      ['a', 0],
      ['c', 1],
    ]);
    expect(conversations[0]?.turns).toEqual([
      { human: '[c0.0] hi there', reply: '[c0.0] hello\nhow are you?' },
      { human: '[c0.1] fine\nand you', reply: '[c0.1] great' },
    ]);
    expect(buildReplyLookup(conversations, 1)).toEqual({ '[c0.0] hi there': '[c0.0] hello\nhow are you?', '[c1.0] q': '[c1.0] a' });
    expect(parseTurnTag('[c1.0] a')).toEqual({ conversationIndex: 1, turn: 0 });
    expect(parseTurnTag('echo: a')).toBeUndefined();
  });

  it('names the file when it is not a transcript file', () => {
    expect(() => loadTranscripts(writeTranscripts({ a: { lines: [] } }))).toThrow(/is not a transcript file: a.content/);
    expect(() => loadTranscripts('/nonexistent/t.json')).toThrow(/cannot read transcripts from \/nonexistent/);
  });
});
