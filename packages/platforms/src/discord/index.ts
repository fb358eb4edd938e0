export { createDiscordGatewayConnection } from './gateway-connection.ts';
export { defaultDiscordIntents, fatalDiscordCloseCodes } from './gateway-protocol.ts';
export type { DiscordDispatch, DiscordGatewayConnection, DiscordGatewayOptions, DiscordGatewaySession, DiscordGatewayStatus, DiscordReady, DiscordSessionStore } from './gateway-types.ts';
export { createDiscordSender } from './discord-sender.ts';
export type { DiscordSenderOptions } from './discord-sender-options.ts';
export { parseDiscordInteraction, type DiscordInteractionContext, type DiscordInteractionParseResult } from './parse-interaction.ts';
export { discordThreadChannelTypes, parseDiscordMessage, type DiscordMessageCreate, type DiscordParseContext } from './parse-message.ts';
export { verifyDiscordSignature, type DiscordSignatureFailure, type DiscordSignatureInput, type DiscordSignatureResult } from './verify-signature.ts';
export { readDiscordReplyTarget, type DiscordReplyTarget } from './reply-target.ts';
