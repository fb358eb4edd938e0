export { apiOnlyNotes } from './api-only-notes.ts';
export { busyInputModes, planNextWork, shouldInterrupt, type BusyInputModeName, type NextWork, type PendingInput } from './busy-mode.ts';
export { chatCommandNames, classifySignal, parseChatCommand, type ChatCommand, type ChatCommandName } from './chat-commands.ts';
export { platforms, resolveConversationKey, type ConversationAddress, type Platform } from './conversation-key.ts';
export { estimateMessageTokens } from './estimate-tokens.ts';
export { splitMessage } from './split-message.ts';
export { findToolTail, type ToolTail, type TranscriptMessageLike } from './tool-tail.ts';
export { planCompression, trimOldestToFit, type CompressibleMessage, type CompressionPlan } from './plan-compression.ts';
export { clientMessageLimits, isNearLimitPart } from './paste-merge.ts';
