export {
  createDiscordGatewayConnection,
  defaultDiscordIntents,
  fatalDiscordCloseCodes,
  type DiscordDispatch,
  type DiscordGatewayConnection,
  type DiscordGatewayOptions,
  type DiscordGatewaySession,
  type DiscordGatewayStatus,
  type DiscordReady,
  type DiscordSessionStore,
} from './gateway-connection.ts';
export { createDiscordSender, type DiscordReplyTarget, type DiscordSenderOptions } from './discord-sender.ts';
export { parseDiscordInteraction, type DiscordInteractionContext, type DiscordInteractionParseResult } from './parse-interaction.ts';
export { discordThreadChannelTypes, parseDiscordMessage, type DiscordMessageCreate, type DiscordParseContext } from './parse-message.ts';
export { verifyDiscordSignature, type DiscordSignatureFailure, type DiscordSignatureInput, type DiscordSignatureResult } from './verify-signature.ts';
export { readDiscordReplyTarget } from './reply-target.ts';
