export { eventsOf, type ActionEvent, type SessionChange } from './action-events.ts';
export { createLifecycleEmitter, emitInOrder, type EmitLifecycleEvent, type LifecycleEmitterDeps } from './lifecycle-emitter.ts';
export {
  createConversationActions,
  MissingReachError,
  type ActionDeps,
  type BusyModeName,
  type BusyModeOutcome,
  type ConversationActions,
  type DeleteOutcome,
  type Door,
  type ReachOutcome,
  type ResetOutcome,
  type ResumeOutcome,
  type RuntimeOutcome,
  type SuspendOutcome,
} from './conversation-actions.ts';
