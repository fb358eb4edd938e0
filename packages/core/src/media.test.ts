import { describe, expect, it } from 'vitest';
import { describeImage, isTextDocument, joinUserText, planAttachment, type InboundAttachment } from './media.ts';

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
