import type { LifecycleEvent } from '@switchboard/queue';

/** A lifecycle event as an action announces it; the emitter stamps `at`. */
export type ActionEvent = Omit<LifecycleEvent, 'at'>;

/** What an action changed, as far as anyone listening to lifecycle events cares. */
export type SessionChange =
  /** /new, /reset (reason `new` or `reset`) and an operator's reset (`operator`). */
  | { kind: 'reset'; conversationId: number; reason: string; oldSessionId: number | null; newSessionId: number }
  /** An operator's suspension or the restart-loop guard's: the session is set aside (parked, or finalized when it can never come back). */
  | { kind: 'suspended'; conversationId: number; reason: string; sessionId: number | null; sessionEnd: 'parked' | 'finalized' }
  | { kind: 'resumed'; conversationId: number; restoredSessionId: number | null; finalizedSessionId: number | null }
  | { kind: 'deleted'; conversationId: number; finalizedSessionId: number | null };

/**
 * The events a change is announced with, in the documented order
 * (docs/restarts.md, "Lifecycle events"): the end of the old session before
 * the start of the new one; the suspension before what became of its
 * session; a session a resume set aside before the resume. Both doors (chat
 * commands and the admin API) and the restart-loop guard announce through
 * this one function, so a receiver sees one order whoever acted.
 */
export function eventsOf(change: SessionChange): ActionEvent[] {
  const conversationId = change.conversationId;
  switch (change.kind) {
    case 'reset':
      return [
        ...(change.oldSessionId !== null ? [{ type: 'session.finalized' as const, conversationId, sessionId: change.oldSessionId, reason: change.reason }] : []),
        { type: 'session.started', conversationId, sessionId: change.newSessionId },
      ];
    case 'suspended': {
      const suspended: ActionEvent = { type: 'conversation.suspended', conversationId, sessionId: change.sessionId ?? undefined, reason: change.reason };
      if (change.sessionId === null) return [suspended];
      // Parked, not finalized: a resume makes it current again, so a receiver must not tear it down.
      const type = change.sessionEnd === 'parked' ? ('session.parked' as const) : ('session.finalized' as const);
      return [suspended, { type, conversationId, sessionId: change.sessionId, reason: change.reason }];
    }
    case 'resumed':
      return [
        ...(change.finalizedSessionId !== null ? [{ type: 'session.finalized' as const, conversationId, sessionId: change.finalizedSessionId, reason: 'resumed' }] : []),
        { type: 'conversation.resumed', conversationId, sessionId: change.restoredSessionId ?? undefined },
      ];
    case 'deleted':
      return change.finalizedSessionId !== null ? [{ type: 'session.finalized', conversationId, sessionId: change.finalizedSessionId, reason: 'deleted' }] : [];
  }
}
