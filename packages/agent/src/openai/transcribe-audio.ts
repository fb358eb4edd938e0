import OpenAI, { toFile } from 'openai';
import { AgentError } from '../agent-error.ts';

export interface TranscriberOptions {
  /** OpenAI-compatible base URL (TRANSCRIBE_BASE_URL); requests go to `<baseURL>/audio/transcriptions`. */
  baseURL: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
}

/** Audio bytes → their text, or TRANSCRIBE_FAILED. */
export type Transcriber = (audio: { bytes: Buffer; name: string; mime: string | null }, signal: AbortSignal) => Promise<string>;

/**
 * Voice messages as text through an OpenAI-compatible `/audio/transcriptions`
 * endpoint (multipart: `file`, `model`). The SDK, not a hand-written
 * multipart body: it is the one OpenAI client of the project (README, "Boundaries").
 */
export function createTranscriber(options: TranscriberOptions): Transcriber {
  const client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey, timeout: options.timeoutMs, maxRetries: 0 });
  return async (audio, signal) => {
    try {
      const file = await toFile(audio.bytes, audio.name, audio.mime ? { type: audio.mime } : undefined);
      const result = await client.audio.transcriptions.create({ file, model: options.model }, { signal });
      return result.text;
    } catch (error) {
      // Never the audio, and never the endpoint's answer body: the user's words may be in it.
      const status = error instanceof OpenAI.APIError ? ` (HTTP ${String(error.status)})` : '';
      throw new AgentError('TRANSCRIBE_FAILED', `transcription failed${status}`);
    }
  };
}
