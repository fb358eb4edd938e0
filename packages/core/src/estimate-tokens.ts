import { countTokens } from 'gpt-tokenizer';

/** Per-message overhead the chat format adds (role markers, separators), as OpenAI documents it. */
const messageOverheadTokens = 4;

/** o200k token count of one transcript message, including its share of the chat framing. */
export function estimateMessageTokens(content: string, extra = ''): number {
  return countTokens(content) + (extra ? countTokens(extra) : 0) + messageOverheadTokens;
}
