export type { ApprovalContext } from './approval-context.ts';
export { createApprovalWaiters, subscribeApprovalWaiters, type ApprovalWaiters } from './approval-waiters.ts';
export { createChatAskUser, type ApprovalTurn } from './create-chat-ask-user.ts';
export { tidySettledQuestions, type TidyContext } from './tidy-questions.ts';
