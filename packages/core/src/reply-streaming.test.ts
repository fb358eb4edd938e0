import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  planStreamStep,
  resolveStreaming,
  stoppedStreamText,
  streamBlockedUntil,
  streamCursor,
  streamEditIntervalMs,
  streamPreviewText,
  streamSettleMs,
  streamStoppedMarker,
  type StreamClock,
} from './reply-streaming.ts';
import { splitMessage } from './split-message.ts';

const clock = (over: Partial<StreamClock>): StreamClock => ({ now: 0, startedAt: 0, afterMs: 1000, firstTextAt: undefined, lastSentAt: undefined, blockedUntil: 0, ...over });

describe('resolveStreaming', () => {
  it('takes the conversation setting over the global one', () => {
    expect(resolveStreaming('off', 'on')).toBe(false);
    expect(resolveStreaming('on', 'off')).toBe(true);
    expect(resolveStreaming(null, 'on')).toBe(true);
    expect(resolveStreaming(undefined, 'off')).toBe(false);
    expect(resolveStreaming('bogus', 'off')).toBe(false);
  });
});

describe('planStreamStep', () => {
  it('waits for text before anything is posted', () => {
    expect(planStreamStep(clock({ now: 5000 }), '', undefined, 4096)).toEqual({ kind: 'wait', ms: undefined });
    expect(planStreamStep(clock({ now: 5000, firstTextAt: 10 }), '   ', undefined, 4096)).toEqual({ kind: 'wait', ms: undefined });
  });

  it('posts only after STREAM_AFTER_MS from the turn start', () => {
    expect(planStreamStep(clock({ now: 400, firstTextAt: 10 }), 'hello', undefined, 4096)).toEqual({ kind: 'wait', ms: 600 });
    expect(planStreamStep(clock({ now: 1000, firstTextAt: 10 }), 'hello', undefined, 4096)).toEqual({ kind: 'post', text: `hello${streamCursor}` });
  });

  it('lets text that just arrived settle before the first post, so a burst that ends at once is never streamed', () => {
    expect(planStreamStep(clock({ now: 3000, firstTextAt: 2950 }), 'all at once', undefined, 4096)).toEqual({ kind: 'wait', ms: streamSettleMs - 50 });
  });

  it('edits at most once per interval, and not when nothing changed', () => {
    const shown = `hello${streamCursor}`;
    expect(planStreamStep(clock({ now: 1500, firstTextAt: 10, lastSentAt: 1000 }), 'hello world', shown, 4096)).toEqual({ kind: 'wait', ms: 500 });
    expect(planStreamStep(clock({ now: 2000, firstTextAt: 10, lastSentAt: 1000 }), 'hello world', shown, 4096)).toEqual({ kind: 'edit', text: `hello world${streamCursor}` });
    expect(planStreamStep(clock({ now: 9000, firstTextAt: 10, lastSentAt: 1000 }), 'hello', shown, 4096)).toEqual({ kind: 'wait', ms: undefined });
  });

  it('holds every send until a 429 has been waited out', () => {
    const step = planStreamStep(clock({ now: 2000, firstTextAt: 10, lastSentAt: 1000, blockedUntil: 6000 }), 'hello world', 'hello …', 4096);
    expect(step).toEqual({ kind: 'wait', ms: 4000 });
  });

  it('never edits more often than the interval, whatever the timing', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 100_000 }), (lastSentAt, now) => {
        const step = planStreamStep(clock({ now, firstTextAt: 0, lastSentAt }), 'new text', 'old …', 4096);
        if (step.kind === 'edit') expect(now - lastSentAt).toBeGreaterThanOrEqual(streamEditIntervalMs);
      }),
    );
  });
});

describe('streamPreviewText', () => {
  it('shows the first part as the final reply will be split, with the cursor, within the limit', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 400 }), fc.integer({ min: 40, max: 120 }), (text, limit) => {
        const preview = streamPreviewText(text, limit);
        // Asserted, never returned: fast-check counts a predicate's falsy return as a failure.
        if (text.trim() === '') {
          expect(preview).toBe('');
          return;
        }
        expect(preview.length).toBeLessThanOrEqual(limit);
        expect(preview.endsWith(streamCursor)).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 600 }), (text) => {
        if (text.trim() === '') return;
        expect(streamPreviewText(text, 100)).toBe(`${splitMessage(text.trimEnd(), 100 - streamCursor.length)[0] ?? ''}${streamCursor}`);
      }),
    );
    const long = 'word '.repeat(100);
    expect(streamPreviewText(long, 100)).toBe(`${splitMessage(long.trimEnd(), 100 - streamCursor.length)[0]}${streamCursor}`);
  });
});

describe('stoppedStreamText', () => {
  it('keeps what was shown, drops the cursor and adds the marker', () => {
    expect(stoppedStreamText(`once upon${streamCursor}`, 4096)).toBe(`once upon${streamStoppedMarker}`);
  });

  it('stays within the limit and is the marker alone when nothing is known', () => {
    expect(stoppedStreamText('x'.repeat(200), 100).length).toBeLessThanOrEqual(100);
    expect(stoppedStreamText('x'.repeat(200), 100).endsWith(streamStoppedMarker)).toBe(true);
    expect(stoppedStreamText(undefined, 100)).toBe(streamStoppedMarker.trim());
  });
});

describe('streamBlockedUntil', () => {
  it('waits what the platform asked, at least one interval', () => {
    expect(streamBlockedUntil(100, 5000)).toBe(5100);
    expect(streamBlockedUntil(100, 10)).toBe(100 + streamEditIntervalMs);
    expect(streamBlockedUntil(100, undefined)).toBe(100 + streamEditIntervalMs);
  });
});
