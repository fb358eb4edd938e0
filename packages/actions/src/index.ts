export { eventsOf, type ActionEvent, type SessionChange } from './action-events.ts';
export { createLifecycleEmitter, emitInOrder, type EmitLifecycleEvent, type LifecycleEmitterDeps } from './lifecycle-emitter.ts';
export { type AlreadyApplied, type Door } from './door.ts';
export {
  modelSettingOf,
  type BusyModeName,
  type BusyModeOutcome,
  type ModelChoice,
  type ModelOutcome,
  type RuntimeOutcome,
  type SettingActions,
  type StreamingOutcome,
} from './setting-actions.ts';
export {
  createConversationActions,
  MissingReachError,
  type ActionDeps,
  type ConversationActions,
  type DeleteOutcome,
  type ReachOutcome,
  type ResetOutcome,
  type ResumeOutcome,
  type SuspendOutcome,
} from './conversation-actions.ts';
export { endSchedule, listActiveSchedules, makeSchedule, type CancelOutcome, type ScheduleDeps, type ScheduleOutcome, type ScheduleRequest } from './schedule-actions.ts';
