export { parseTelegramUpdate, readTelegramBotId, telegramUnknownChatType, type TelegramParseContext } from './parse-update.ts';
export { answerTelegramCallback, createTelegramSender, type TelegramSenderOptions } from './telegram-sender.ts';
export { readTelegramReplyTarget, type TelegramReplyTarget } from './reply-target.ts';
export { measureTelegramHtml, renderTelegramHtml } from './render-html.ts';
