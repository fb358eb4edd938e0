export { equalsConstantTime } from './constant-time.ts';
export { PlatformError, type PlatformErrorCode } from './errors.ts';
export { signatureMaxAgeMs } from './signature-window.ts';
export { chatReplyTarget } from './chat-target.ts';
export * from './discord/index.ts';
export * from './slack/index.ts';
export * from './telegram/index.ts';
export type { ButtonPress, ChoiceButton, InboundMessage, ParseResult, PlatformSender, SentMessage } from './types.ts';
export { createDiscordFileFetcher, createSlackFileFetcher, createTelegramFileFetcher, downloadBounded, type FetchLimits, type FileFetcher } from './fetch-file.ts';
