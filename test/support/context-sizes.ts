/**
 * The small context the compression tests are sized for: 1,900 tokens, so a
 * few long messages reach the threshold. The threshold is 0.877 rather than
 * the default 0.8 because the built-in `schedule` tool's schema added 146
 * tokens to every request (~353 with the system prompt, from ~207): moved by
 * 146 / 1,900, the room a session has before it is compressed is the 1,313
 * tokens it had, and the kept tail (COMPRESSION_KEEP_RATIO of the context)
 * and the trimming limit (the context) are unchanged, so every test's sizes
 * hold as written.
 */
export const smallContextEnv = { MODEL_CONTEXT_TOKENS: '1900', COMPRESSION_THRESHOLD: '0.877' } as const;
