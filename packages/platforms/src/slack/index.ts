export { escapeSlackText } from './escape-text.ts';
export { renderSlackMrkdwn } from './render-mrkdwn.ts';
export { parseSlackEvent, type SlackParseContext, type SlackReplyTarget } from './parse-event.ts';
export { parseSlackInteraction } from './parse-interaction.ts';
export {
  createSlackClient,
  createSlackSender,
  fetchSlackAuthInfo,
  respondToSlackAction,
  type SlackSenderOptions,
} from './slack-sender.ts';
export type { SlackAuthInfo, SlackClientOptions } from './slack-client-types.ts';
export {
  verifySlackSignature,
  type SlackSignatureFailure,
  type SlackSignatureInput,
  type SlackSignatureResult,
} from './verify-signature.ts';
export { readSlackReplyTarget } from './reply-target.ts';
