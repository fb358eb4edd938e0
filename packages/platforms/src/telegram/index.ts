export { parseTelegramUpdate, readTelegramBotId, type TelegramParseContext } from './parse-update.ts';
export { createTelegramSender, type TelegramSenderOptions } from './telegram-sender.ts';
