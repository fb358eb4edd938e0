import { describe, expect, it } from 'vitest';
import { pidOf, tagsInSummaryRequest } from './aimed-kills.ts';

describe(tagsInSummaryRequest.name, () => {
  it('names the conversation of a summariser request from the tagged lines quoted in its transcript', () => {
    const transcript = 'Transcript to summarise:\nassistant (summary): Summary: the earlier small talk.\nuser: [c41.6] Do you like jazz?\nassistant: [c41.6] I do.';
    expect(tagsInSummaryRequest([{ content: 'You summarise.' }, { content: transcript }])).toEqual([41]);
  });

  it('ignores a turn request and a transcript with no tag', () => {
    expect(tagsInSummaryRequest([{ content: '[c41.6] Do you like jazz?' }])).toEqual([]);
    expect(tagsInSummaryRequest([{ content: 'Transcript to summarise:\nuser: hello' }])).toEqual([]);
    expect(tagsInSummaryRequest([])).toEqual([]);
  });
});

describe('pidOf', () => {
  it('reads the pid from a worker id whose hostname has dashes', () => {
    expect(pidOf('build-host-7-4242-a1b2c3')).toBe(4242);
  });
});
