export { escapeSlackText } from './escape-text.ts';
export { renderSlackMrkdwn } from './render-mrkdwn.ts';
export { parseSlackEvent, type SlackParseContext, type SlackReplyTarget } from './parse-event.ts';
export { parseSlackInteraction } from './parse-interaction.ts';
export {
  createSlackClient,
  createSlackSender,
  fetchSlackAuthInfo,
  respondToSlackAction,
  type SlackAuthInfo,
  type SlackClientOptions,
  type SlackSenderOptions,
} from './slack-sender.ts';
export {
  verifySlackSignature,
  type SlackSignatureFailure,
  type SlackSignatureInput,
  type SlackSignatureResult,
} from './verify-signature.ts';
export { readSlackReplyTarget } from './reply-target.ts';
