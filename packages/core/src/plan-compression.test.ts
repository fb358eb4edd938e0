import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planCompression, trimOldestToFit, type CompressibleMessage } from './plan-compression.ts';

type Msg = CompressibleMessage & { id: number };

/** A random valid transcript: user/assistant turns, some assistants calling 1–3 tools followed by their results. */
const transcript = fc
  .array(
    fc.oneof(
      fc.record({ kind: fc.constant('user' as const), tokens: fc.integer({ min: 1, max: 400 }) }),
      fc.record({ kind: fc.constant('answer' as const), tokens: fc.integer({ min: 1, max: 400 }) }),
      fc.record({ kind: fc.constant('tools' as const), tokens: fc.integer({ min: 1, max: 100 }), results: fc.array(fc.integer({ min: 1, max: 2000 }), { minLength: 1, maxLength: 3 }) }),
    ),
    { minLength: 1, maxLength: 120 },
  )
  .map((steps) => {
    const messages: Msg[] = [];
    for (const step of steps) {
      if (step.kind === 'user') messages.push({ id: messages.length, role: 'user', tokens: step.tokens });
      else if (step.kind === 'answer') messages.push({ id: messages.length, role: 'assistant', tokens: step.tokens });
      else {
        messages.push({ id: messages.length, role: 'assistant', tokens: step.tokens, toolCalls: step.results.map((_, i) => i) });
        for (const tokens of step.results) messages.push({ id: messages.length, role: 'tool', tokens });
      }
    }
    return messages;
  });

describe('planCompression', () => {
  it('keeps the newest messages within budget and summarises the rest, in order', () => {
    const messages: Msg[] = [10, 10, 10, 10, 10].map((tokens, id) => ({ id, role: id % 2 ? 'assistant' : 'user', tokens }));
    const plan = planCompression(messages, 25);
    expect(plan?.summarise.map((m) => m.id)).toEqual([0, 1, 2]);
    expect(plan?.keep.map((m) => m.id)).toEqual([3, 4]);
  });

  it('never separates tool results from the assistant message that called them', () => {
    const messages: Msg[] = [
      { id: 0, role: 'user', tokens: 50 },
      { id: 1, role: 'assistant', tokens: 5, toolCalls: [1, 2] },
      { id: 2, role: 'tool', tokens: 5 },
      { id: 3, role: 'tool', tokens: 5 },
      { id: 4, role: 'assistant', tokens: 5 },
    ];
    expect(planCompression(messages, 12)?.keep.map((m) => m.id)).toEqual([1, 2, 3, 4]);
  });

  it('returns null when everything fits or nothing can be summarised', () => {
    expect(planCompression([{ role: 'user', tokens: 5 }], 100)).toBeNull();
    expect(planCompression([], 100)).toBeNull();
  });

  it('property: the kept part never starts with an orphan tool result, and the parts rejoin to the whole', () => {
    fc.assert(
      fc.property(transcript, fc.integer({ min: 0, max: 5000 }), (messages, budget) => {
        const plan = planCompression(messages, budget);
        if (!plan) return;
        expect([...plan.summarise, ...plan.keep].map((m) => m.id)).toEqual(messages.map((m) => m.id));
        expect(plan.summarise.length).toBeGreaterThan(0);
        expect(plan.keep[0]?.role).not.toBe('tool');
      }),
      { numRuns: 500 },
    );
  });
});

describe('trimOldestToFit', () => {
  it('property: fits the budget when possible and never starts with a tool result', () => {
    fc.assert(
      fc.property(transcript, fc.integer({ min: 0, max: 5000 }), (messages, budget) => {
        const { sent, dropped } = trimOldestToFit(messages, budget);
        expect(sent.length + dropped).toBe(messages.length);
        if (sent.length > 0) expect(sent[0]?.role).not.toBe('tool');
        const total = sent.reduce((sum, m) => sum + m.tokens, 0);
        if (dropped > 0 && sent.length > 0 && messages[dropped - 1]?.role !== 'tool') expect(total).toBeLessThanOrEqual(budget);
      }),
      { numRuns: 500 },
    );
  });
});
