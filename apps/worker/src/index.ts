export { startWorker, type RunningWorker } from './start-worker.ts';
export { createApprovalWaiters, createChatAskUser, subscribeApprovalWaiters, type ApprovalContext, type ApprovalTurn, type ApprovalWaiters } from './approvals/index.ts';
export { afterDrainMs, hardStopMsFor } from './stop-deadline.ts';
