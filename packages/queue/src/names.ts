/** Queue names: one queue per kind of work. */
export enum QueueName {
  Turns = 'turns',
}

/** Job names inside a queue; start-up fails if one has no handler (see assertHandlers). */
export enum JobName {
  /** "This conversation has input waiting": the worker that gets the conversation's lease runs it. */
  WakeConversation = 'wake-conversation',
  /** An operator asked to compress now: the lease holder compresses before any other work. */
  CompactConversation = 'compact-conversation',
}
