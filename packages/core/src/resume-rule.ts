/** What the resume rule needs of a conversation's most recent turn. */
export interface PreviousTurn {
  sessionId: number;
  cutOffAt: Date | null;
}

/**
 * The next turn resumes a turn that a restart cut off (and gets
 * the resume note) when that turn was the conversation's last one and ran on
 * this session — or on its parent, if a compression came in between. A fresh
 * session after a suspension or a reset is no resume.
 */
export function resumesCutOffTurn(previous: PreviousTurn | undefined, session: { id: number; parentSessionId: number | null }): boolean {
  if (!previous?.cutOffAt) return false;
  return previous.sessionId === session.id || previous.sessionId === session.parentSessionId;
}
