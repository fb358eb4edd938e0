export { apiOnlyNotes } from './api-only-notes.ts';
export { busyInputModes, planNextWork, shouldInterrupt, waitsWhileBusy, type BusyInputModeName, type NextWork, type PendingInput } from './busy-mode.ts';
export {
  approvalButtons,
  approvalChoiceOfCommand,
  approvalChoices,
  approvalReplies,
  describeApprovalOutcome,
  encodeApprovalPayload,
  isApprovalCommand,
  mayAnswerApproval,
  parseApprovalCommand,
  parseApprovalPayload,
  renderApprovalDecision,
  renderNotAllowed,
  userKeyOf,
  type ApprovalChoice,
} from './approvals.ts';
export {
  approvalQuestionIsCut,
  approvalSessionNote,
  formatApproveCode,
  keepHeadAndTail,
  renderAnsweredQuestion,
  renderApprovalQuestion,
  type ApprovalQuestionText,
} from './approval-question.ts';
export {
  chatCommandNames,
  classifySignal,
  isCommandForAnotherBot,
  parseChatCommand,
  plainTextCommand,
  parseScheduleCancelPayload,
  readStoredCommand,
  scheduleCancelPayload,
  scheduleCancelText,
  signalOfCommand,
  storedCommandOf,
  type ChatCommand,
  type ChatCommandName,
  type SchedulesAction,
  type StoredCommand,
} from './chat-commands.ts';
export { platforms, resolveConversationKey, type ConversationAddress, type Platform } from './conversation-key.ts';
export { splitMessage } from './split-message.ts';
export { findToolTail, type ToolTail, type TranscriptMessageLike } from './tool-tail.ts';
export type { ToolCall, TranscriptMessage } from './transcript-message.ts';
export { planCompression, trimOldestToFit, type CompressibleMessage, type CompressionPlan } from './plan-compression.ts';
export { clientMessageLimits, isNearLimitPart } from './paste-merge.ts';
export { decideAccess, type AccessPolicy, type AccessRequest, type AccessVerdict, type DmPolicy } from './access-policy.ts';
export {
  decidePairingRequest,
  generatePairingCode,
  isPairingExpired,
  normalisePairingCode,
  pairingAlphabet,
  pairingNotices,
  pairingRules,
  renderPairingCodeNotice,
  type PairingDecision,
  type PairingRules,
  type PairingState,
} from './pairing.ts';
export { estimateRequestTokens, needsCompression, type PreflightInput } from './preflight.ts';
export { normaliseStringValues, normaliseText } from './normalise-text.ts';
export { decideWait, type WaitAllowance, type WaitDecision } from './wait-limits.ts';
export { errorCodes, isRetryableCode, shapeError, type ErrorCode, type ErrorCodeOf, type ErrorFamily, type ErrorShape } from './error-codes.ts';
export { agentRuntimeNames, permissionProfiles, resolveAgentRuntime, resolvePermissionProfile, isFullAccessProfile, type AgentRuntimeName, type PermissionProfile } from './runtime-choice.ts';
export {
  automaticCompressionGate,
  compressionBackoffMaxDoublings,
  compressionMinimumShrink,
  hasEnoughToSummarise,
  judgeCompression,
  judgeCompressionFailure,
  nonShrinkingCompressionsToBlock,
  type CompressionPolicy,
  type CompressionVerdict,
} from './compression-rules.ts';
export { isOverQueueCap, queueCapFor } from './queue-cap.ts';
export {
  countsAsRestart,
  isRestartLoop,
  isWorkerAlive,
  judgeStaleTurn,
  restartLoopStartsAt,
  staleTurnEndings,
  staleTurnRule,
  type StaleTurnFate,
  type TurnWorker,
} from './restart-rules.ts';
export { isInsideDirectory, resolveWorkspacePath, type WorkspacePath } from './workspace-path.ts';
export { movesToNextModel, orderModelEndpoints, planModelOrder, type ChosenModel, type ModelFailureKind, type ModelPlan } from './model-fallbacks.ts';
export { crashStreakChangeOf, crashStreakSuspends, type CrashStreakChange } from './runtime-crashes.ts';
export { planReactionChange, reactionEmoji, reactionOfTurn, type ReactionChange, type ReactionStatus, type SettledTurnStatus } from './status-reactions.ts';
export {
  cutDocumentText,
  describeDocument,
  describeImage,
  fitsTurnBudget,
  describeUnreadFile,
  isTextDocument,
  joinUserText,
  mediaNotices,
  planAttachment,
  type AttachmentKind,
  type AttachmentPlan,
  type InboundAttachment,
  type MediaNoticeReason,
  type MediaTurnBudget,
  type MediaTurnSpent,
} from './media.ts';
export {
  planStreamStep,
  resolveStreaming,
  stoppedStreamText,
  streamBlockedUntil,
  streamCursor,
  streamEditIntervalMs,
  streamingSettings,
  streamPreviewText,
  streamStoppedMarker,
  type StreamClock,
  type StreamingSetting,
  type StreamStep,
} from './reply-streaming.ts';
export { isWorkerSecretName } from './worker-secret-names.ts';
export { approvalAskedOf, hookEventId, hookUserId, isHookUserId, renderHookPrompt } from './triggered-turns.ts';
export {
  checkScheduleSpec,
  decideOccurrence,
  formatScheduleList,
  isScheduleUserId,
  isTimeZone,
  nextCronTimes,
  scheduleEventId,
  scheduleMaxAheadMs,
  scheduleMinIntervalMs,
  schedulePromptMaxChars,
  scheduleUserId,
  type OccurrenceDecision,
  type OccurrenceFacts,
  type ScheduleLine,
  type ScheduleSpec,
  type ScheduleSpecCheck,
  type ScheduleStatus,
  type ValidSchedule,
} from './schedules.ts';
