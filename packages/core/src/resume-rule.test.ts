import { describe, expect, it } from 'vitest';
import { resumesCutOffTurn } from './resume-rule.ts';

const cutOff = new Date('2026-11-23T12:00:00Z');

describe('resumesCutOffTurn', () => {
  it('resumes a cut-off last turn on the same session', () => {
    expect(resumesCutOffTurn({ sessionId: 5, cutOffAt: cutOff }, { id: 5, parentSessionId: null })).toBe(true);
  });
  it('resumes across a compression (the cut-off turn ran on the parent)', () => {
    expect(resumesCutOffTurn({ sessionId: 5, cutOffAt: cutOff }, { id: 6, parentSessionId: 5 })).toBe(true);
  });
  it('does not resume on a fresh session after a suspension or reset, nor after a turn that ended normally', () => {
    expect(resumesCutOffTurn({ sessionId: 5, cutOffAt: cutOff }, { id: 9, parentSessionId: null })).toBe(false);
    expect(resumesCutOffTurn({ sessionId: 5, cutOffAt: null }, { id: 5, parentSessionId: null })).toBe(false);
    expect(resumesCutOffTurn(undefined, { id: 5, parentSessionId: null })).toBe(false);
  });
});
