import OpenAI from 'openai';
import { AgentError } from '../agent-error.ts';
import type { Summariser } from '../agent-runtime.ts';
import { summarySystemPrompt } from '../summarise/summary-prompt.ts';

export interface SummariserOptions {
  baseURL: string;
  apiKey: string;
  model: string;
  /** A hanging summariser must not hold a turn forever (docs/compression.md). */
  timeoutMs: number;
}

/** The summariser of compression on chat completions: one request, no tools, no streaming. */
export function createSummariser(options: SummariserOptions): Summariser {
  // No retries here: a failed summary is backed off and tried on a later turn, which goes on meanwhile (docs/compression.md).
  const client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey, timeout: options.timeoutMs, maxRetries: 0 });
  return {
    async summarise(transcript) {
      let text: string | null | undefined;
      try {
        const completion = await client.chat.completions.create({
          model: options.model,
          messages: [
            { role: 'system', content: summarySystemPrompt },
            { role: 'user', content: `Transcript to summarise:\n${transcript}` },
          ],
        });
        text = completion.choices[0]?.message.content;
      } catch (error) {
        throw new AgentError('MODEL_FAILED', 'summariser request failed', error);
      }
      if (!text || text.trim() === '') throw new AgentError('MODEL_FAILED', 'summariser returned an empty summary');
      return text.trim();
    },
  };
}
