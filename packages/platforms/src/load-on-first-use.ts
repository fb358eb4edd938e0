import { PlatformError } from './errors.ts';
import type { PlatformSender } from './types.ts';

/*
 * The Slack and Discord SDKs (@slack/web-api, @discordjs/rest with
 * discord-api-types) cost about 14 MiB of RSS once imported. A process where
 * those platforms are off never calls them, so the modules that import them
 * are loaded with import() on their first use, not by this package's barrel:
 * the production build puts each in a chunk of its own (docs/benchmarks.md,
 * "Memory from the production build").
 */

/**
 * Runs `load` once, on the first call, and hands every caller its result. A
 * failed load is not kept: the next call tries again (a transient read error
 * must not turn a platform off until restart).
 */
export function loadOnFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}

/** A sender with every optional method: what the Slack and Discord senders are. */
export type FullSender = PlatformSender & Required<Pick<PlatformSender, 'sendWithButtons' | 'setReaction' | 'editText' | 'replaceText'>>;

/** What a sender states without its SDK: the fields the worker reads before it sends. */
export type SenderShape = Pick<PlatformSender, 'platform' | 'messageLimit' | 'typingIntervalMs' | 'fitsOneMessage'>;

/**
 * A sender whose SDK loads on its first call. Its shape is given up front, so
 * splitting a reply never waits on the load. A load that fails rejects the
 * call with UNAVAILABLE: delivery retries it as it would a network error.
 */
export function deferSender(shape: SenderShape, load: () => Promise<FullSender>): FullSender {
  const sender = loadOnFirstUse(async () => {
    try {
      return await load();
    } catch (error) {
      throw new PlatformError('UNAVAILABLE', `${shape.platform}: the platform's client did not load`, { cause: error });
    }
  });
  return {
    ...shape,
    sendText: async (...args) => (await sender()).sendText(...args),
    sendTyping: async (...args) => (await sender()).sendTyping(...args),
    sendWithButtons: async (...args) => (await sender()).sendWithButtons(...args),
    setReaction: async (...args) => (await sender()).setReaction(...args),
    editText: async (...args) => (await sender()).editText(...args),
    replaceText: async (...args) => (await sender()).replaceText(...args),
  };
}
