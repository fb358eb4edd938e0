import { describe, expect, it } from 'vitest';
import { createDeferredConversations } from './deferred-conversations.ts';

describe(createDeferredConversations.name, () => {
  it("hands back one user's deferred conversations oldest first, one per ended turn, and never another user's", () => {
    const deferred = createDeferredConversations();
    deferred.defer('slack:T1:U1', 11);
    deferred.defer('slack:T1:U2', 21);
    deferred.defer('slack:T1:U1', 12);
    deferred.defer('slack:T1:U1', 11);
    expect(deferred.size()).toBe(3);
    expect(deferred.takeNext('slack:T1:U1')).toBe(11);
    expect(deferred.takeNext('slack:T1:U1')).toBe(12);
    expect(deferred.takeNext('slack:T1:U1')).toBeUndefined();
    expect(deferred.takeNext('slack:T1:U2')).toBe(21);
    expect(deferred.size()).toBe(0);
  });

  it('forgets a conversation that runs now', () => {
    const deferred = createDeferredConversations();
    deferred.defer('u', 1);
    deferred.defer('u', 2);
    deferred.forget('u', 1);
    deferred.forget('u', 99);
    expect(deferred.takeNext('u')).toBe(2);
    expect(deferred.size()).toBe(0);
  });

  it('keeps at most maxEntries, dropping the oldest', () => {
    const deferred = createDeferredConversations(3);
    for (const id of [1, 2, 3]) deferred.defer('a', id);
    deferred.defer('b', 4);
    expect(deferred.size()).toBe(3);
    expect([deferred.takeNext('a'), deferred.takeNext('a'), deferred.takeNext('a'), deferred.takeNext('b')]).toEqual([2, 3, undefined, 4]);
  });
});
