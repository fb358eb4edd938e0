import type { Params } from './telegram-params.ts';
import type { TelegramStore } from './telegram-store.ts';

/**
 * The shape every Bot API method handler shares. Its own module so that the
 * handler files (telegram-methods, telegram-buttons, telegram-get-updates)
 * all import it from here instead of from each other.
 */
export interface MethodContext {
  store: TelegramStore;
  params: Params;
  /** The token from the URL, used for getMe when no token is configured. */
  token: string;
  signal: AbortSignal;
}

/** A successful call: `result`, plus the `description` some methods carry ("Webhook was set"). */
export interface MethodOutcome {
  result: unknown;
  description?: string;
}

export type MethodHandler = (context: MethodContext) => MethodOutcome | Promise<MethodOutcome>;
