import { pino, stdSerializers, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

// Anything that can carry a credential is censored wherever it appears in a
// log object: platform tokens travel in URLs (Telegram's /bot<token>/) and headers.
const redactPaths = [
  'token',
  '*.token',
  'secret',
  '*.secret',
  'password',
  '*.password',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers["x-telegram-bot-api-secret-token"]',
  'req.headers["x-slack-signature"]',
  'req.headers["x-signature-ed25519"]',
  'apiKey',
  '*.apiKey',
  'botToken',
  '*.botToken',
];

const telegramTokenInText = /bot\d+:[A-Za-z0-9_-]+/g;

/** Removes bot tokens that appear inside free text such as URLs or error messages. */
export function scrubSecrets(text: string): string {
  return text.replace(telegramTokenInText, 'bot<redacted>');
}

export function createLogger(name: string, level: string = process.env.LOG_LEVEL ?? 'info', options: LoggerOptions = {}): Logger {
  return pino({
    name,
    level,
    redact: { paths: redactPaths, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }) },
    hooks: {
      logMethod(args, method) {
        const scrubbed = args.map((arg) => (typeof arg === 'string' ? scrubSecrets(arg) : arg)) as Parameters<typeof method>;
        method.apply(this, scrubbed);
      },
    },
    serializers: {
      err: (err: unknown) => {
        const serialized = stdSerializers.err(err as Error);
        if (serialized.message) serialized.message = scrubSecrets(serialized.message);
        if (serialized.stack) serialized.stack = scrubSecrets(serialized.stack);
        return serialized;
      },
    },
    ...options,
  });
}
