import { describe, expect, it } from 'vitest';
import { eventsOf } from './action-events.ts';

// docs/restarts.md, "Lifecycle events": one order whoever acts (a chat command, an operator, the restart-loop guard).
describe('eventsOf', () => {
  it('announces a reset as the old session finalized, then the new one started', () => {
    expect(eventsOf({ kind: 'reset', conversationId: 1, reason: 'new', oldSessionId: 10, newSessionId: 11 })).toEqual([
      { type: 'session.finalized', conversationId: 1, sessionId: 10, reason: 'new' },
      { type: 'session.started', conversationId: 1, sessionId: 11 },
    ]);
    expect(eventsOf({ kind: 'reset', conversationId: 1, reason: 'operator', oldSessionId: null, newSessionId: 11 })).toEqual([
      { type: 'session.started', conversationId: 1, sessionId: 11 },
    ]);
  });

  it('announces a suspension before what became of its session: parked, never finalized, unless it can never come back', () => {
    expect(eventsOf({ kind: 'suspended', conversationId: 2, reason: 'investigating', sessionId: 20, sessionEnd: 'parked' })).toEqual([
      { type: 'conversation.suspended', conversationId: 2, sessionId: 20, reason: 'investigating' },
      { type: 'session.parked', conversationId: 2, sessionId: 20, reason: 'investigating' },
    ]);
    expect(eventsOf({ kind: 'suspended', conversationId: 2, reason: 'restart_loop', sessionId: 21, sessionEnd: 'finalized' }).map((e) => e.type)).toEqual([
      'conversation.suspended',
      'session.finalized',
    ]);
    expect(eventsOf({ kind: 'suspended', conversationId: 2, reason: 'operator', sessionId: null, sessionEnd: 'parked' })).toEqual([
      { type: 'conversation.suspended', conversationId: 2, sessionId: undefined, reason: 'operator' },
    ]);
  });

  it('announces a session a resume set aside before the resume', () => {
    expect(eventsOf({ kind: 'resumed', conversationId: 3, restoredSessionId: 30, finalizedSessionId: 31 })).toEqual([
      { type: 'session.finalized', conversationId: 3, sessionId: 31, reason: 'resumed' },
      { type: 'conversation.resumed', conversationId: 3, sessionId: 30 },
    ]);
    expect(eventsOf({ kind: 'resumed', conversationId: 3, restoredSessionId: null, finalizedSessionId: null })).toEqual([
      { type: 'conversation.resumed', conversationId: 3, sessionId: undefined },
    ]);
  });

  it('announces a delete as its session finalized, if it had one', () => {
    expect(eventsOf({ kind: 'deleted', conversationId: 4, finalizedSessionId: 40 })).toEqual([{ type: 'session.finalized', conversationId: 4, sessionId: 40, reason: 'deleted' }]);
    expect(eventsOf({ kind: 'deleted', conversationId: 4, finalizedSessionId: null })).toEqual([]);
  });
});
