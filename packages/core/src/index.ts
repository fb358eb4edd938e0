export { platforms, resolveConversationKey, type ConversationAddress, type Platform } from './conversation-key.ts';
export { splitMessage } from './split-message.ts';
export { estimateMessageTokens } from './estimate-tokens.ts';
