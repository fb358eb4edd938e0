import { createTranscriber, type Transcriber } from '@switchboard/agent';
import { transcribeApiKeyOf, type WorkerConfig } from '@switchboard/config';
import { createDiscordFileFetcher, createSlackFileFetcher, createTelegramFileFetcher, type FileFetcher } from '@switchboard/platforms';

/** How a worker reaches users' files and turns voice into text (docs/media.md). */
export interface MediaReach {
  fetchers: Map<string, FileFetcher>;
  /** Absent: TRANSCRIBE_BASE_URL is unset and voice is refused with one short reply. */
  transcribe?: Transcriber;
}

export function createMediaReach(config: WorkerConfig): MediaReach {
  const fetchers = new Map<string, FileFetcher>();
  if (config.TELEGRAM_BOT_TOKEN) fetchers.set('telegram', createTelegramFileFetcher({ token: config.TELEGRAM_BOT_TOKEN, apiRoot: config.TELEGRAM_API_ROOT }));
  if (config.SLACK_BOT_TOKEN) fetchers.set('slack', createSlackFileFetcher({ token: config.SLACK_BOT_TOKEN, apiUrl: config.SLACK_API_URL }));
  if (config.DISCORD_BOT_TOKEN) fetchers.set('discord', createDiscordFileFetcher({ apiUrl: config.DISCORD_API_URL }));
  const transcribe = config.TRANSCRIBE_BASE_URL
    ? createTranscriber({
        baseURL: config.TRANSCRIBE_BASE_URL,
        // The SDK requires a key; a transcriber on another origin gets a placeholder, never the model's (transcribeApiKeyOf).
        apiKey: transcribeApiKeyOf(config) ?? 'none',
        model: config.TRANSCRIBE_MODEL,
        timeoutMs: config.TRANSCRIBE_TIMEOUT_MS,
      })
    : undefined;
  return { fetchers, ...(transcribe ? { transcribe } : {}) };
}
