import { describe, expect, it } from 'vitest';
import { cutDocumentText, describeImage, fitsTurnBudget, isTextDocument, joinUserText, planAttachment, type InboundAttachment } from './media.ts';

const file = (fields: Partial<InboundAttachment>): InboundAttachment => ({ kind: 'document', ref: 'r', mime: null, name: null, size: null, ...fields });
const limits = { maxBytes: 1000, transcription: true };

describe('planAttachment', () => {
  it('refuses a file announced over the limit before any download', () => {
    expect(planAttachment(file({ kind: 'image', mime: 'image/png', size: 1001 }), limits)).toEqual({ kind: 'refuse', reason: 'too_large' });
    expect(planAttachment(file({ kind: 'image', mime: 'image/png', size: 1000 }), limits)).toEqual({ kind: 'image' });
  });

  it('transcribes audio only when transcription is on', () => {
    expect(planAttachment(file({ kind: 'audio' }), limits)).toEqual({ kind: 'transcribe' });
    expect(planAttachment(file({ kind: 'audio' }), { ...limits, transcription: false })).toEqual({ kind: 'refuse', reason: 'voice_off' });
  });

  it('reads text-like documents as text, sends image documents as images, refuses the rest', () => {
    expect(planAttachment(file({ mime: 'text/csv', name: 'a.csv' }), limits)).toEqual({ kind: 'text' });
    expect(planAttachment(file({ mime: 'application/octet-stream', name: 'main.rs' }), limits)).toEqual({ kind: 'text' });
    expect(planAttachment(file({ mime: 'image/png', name: 'a.png' }), limits)).toEqual({ kind: 'image' });
    expect(planAttachment(file({ mime: 'application/zip', name: 'a.zip' }), limits)).toEqual({ kind: 'refuse', reason: 'unsupported' });
    expect(planAttachment(file({ kind: 'image', mime: 'image/tiff' }), limits)).toEqual({ kind: 'refuse', reason: 'unsupported' });
  });
});

describe('the text a file becomes', () => {
  it('names text documents by MIME type or extension', () => {
    expect(isTextDocument('text/markdown; charset=utf-8', null)).toBe(true);
    expect(isTextDocument(null, 'notes.MD')).toBe(true);
    expect(isTextDocument('application/pdf', 'a.pdf')).toBe(false);
  });

  it('keeps a caption first and an image as a short placeholder', () => {
    expect(joinUserText('  look ', [describeImage(null, 'ab'.repeat(32))])).toBe(`look\n\n[image: photo, sha256 ${'ab'.repeat(6)}]`);
    expect(joinUserText('', ['only'])).toBe('only');
  });
});

describe('the turn\'s media budget (issue 30, finding 3)', () => {
  const budget = { maxBytes: 1000, maxImages: 1, maxDocumentChars: 10 };

  it('admits files while the turn\'s bytes and images last', () => {
    expect(fitsTurnBudget({ bytes: 0, images: 0 }, budget, { kind: 'text', size: 1000 })).toBe(true);
    expect(fitsTurnBudget({ bytes: 1, images: 0 }, budget, { kind: 'text', size: 1000 })).toBe(false);
    expect(fitsTurnBudget({ bytes: 0, images: 1 }, budget, { kind: 'image', size: 10 })).toBe(false);
    expect(fitsTurnBudget({ bytes: 0, images: 1 }, budget, { kind: 'transcribe', size: 10 })).toBe(true);
    expect(fitsTurnBudget({ bytes: 999, images: 0 }, budget, { kind: 'text', size: null })).toBe(true);
  });

  it('cuts a long document with a line saying so, never inside a surrogate pair', () => {
    expect(cutDocumentText('short', 10)).toBe('short');
    expect(cutDocumentText('abcdefghijklmnop', 10)).toBe('abcdefghij\n[cut: the document is 16 characters long; only the first 10 were read]');
    const cut = cutDocumentText('abcdefghi😀xyz', 10);
    expect(cut.startsWith('abcdefghi\n')).toBe(true);
    expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });
});
