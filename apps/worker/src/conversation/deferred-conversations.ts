/**
 * Conversations this worker process deferred because the user of their next
 * input already ran USER_MAX_RUNNING_TURNS turns (issue 17, defect 3), oldest
 * first per user. When a turn of that user ends here, the one deferred
 * longest ago is woken at once. This is only the quick path: a deferred
 * conversation's input stays pending in Postgres, so the recovery sweep wakes
 * it anyway (one deferred by another worker, or forgotten by a restart,
 * waits at most one sweep bucket, about 5 s).
 */
export interface DeferredConversations {
  defer(userKey: string, conversationId: number): void;
  /** The conversation runs a turn now: it no longer waits for a wake-up. */
  forget(userKey: string, conversationId: number): void;
  /** A turn of the user ended: the conversation deferred longest ago, taken off the list, if any. */
  takeNext(userKey: string): number | undefined;
  size(): number;
}

/**
 * `maxEntries` bounds the memory: an entry whose conversation was then run
 * by another worker stays until its user's next turn here, which may never
 * come; past the bound the oldest entries go (the sweep still wakes them).
 */
export function createDeferredConversations(maxEntries = 10_000): DeferredConversations {
  const byUser = new Map<string, Set<number>>();
  let size = 0;
  const remove = (userKey: string, conversationId: number) => {
    const set = byUser.get(userKey);
    if (!set?.delete(conversationId)) return;
    size--;
    if (set.size === 0) byUser.delete(userKey);
  };
  return {
    defer(userKey, conversationId) {
      let set = byUser.get(userKey);
      if (!set) byUser.set(userKey, (set = new Set()));
      if (set.has(conversationId)) return;
      set.add(conversationId);
      size++;
      while (size > maxEntries) {
        const [oldestUser, oldestSet] = byUser.entries().next().value as [string, Set<number>];
        remove(oldestUser, oldestSet.values().next().value as number);
      }
    },
    forget: remove,
    takeNext(userKey) {
      const next = byUser.get(userKey)?.values().next().value;
      if (next !== undefined) remove(userKey, next);
      return next;
    },
    size: () => size,
  };
}
