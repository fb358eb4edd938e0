/**
 * The key sent to TRANSCRIBE_BASE_URL (issue 30, finding 8): its own
 * TRANSCRIBE_API_KEY, else MODEL_API_KEY only when the transcriber is the
 * model's own service (the same origin). A transcriber on another host
 * never gets the model provider's key: it would be a secret sent to a party
 * that has no use for it. Undefined: send none.
 */
export function transcribeApiKeyOf(config: { TRANSCRIBE_BASE_URL?: string | undefined; TRANSCRIBE_API_KEY?: string | undefined; MODEL_BASE_URL: string; MODEL_API_KEY: string }): string | undefined {
  if (config.TRANSCRIBE_API_KEY !== undefined) return config.TRANSCRIBE_API_KEY;
  if (config.TRANSCRIBE_BASE_URL === undefined) return undefined;
  return originOf(config.TRANSCRIBE_BASE_URL) === originOf(config.MODEL_BASE_URL) ? config.MODEL_API_KEY : undefined;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
