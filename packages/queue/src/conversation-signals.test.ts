import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisPrefix, redisUrl } from '@switchboard/harness/test-env';
import { publishSignal, subscribeSignals, type ConversationSignal } from './conversation-signals.ts';
import { conversationLeaseKey, createRedisLease } from './redis-lease.ts';

describe('conversation signals', () => {
  const prefix = createRedisPrefix();
  let redis: Redis;
  let subscriber: Redis;
  const heard: ConversationSignal[] = [];

  beforeAll(async () => {
    redis = new Redis(redisUrl());
    subscriber = new Redis(redisUrl());
    await subscribeSignals(subscriber, prefix, (signal) => heard.push(signal));
  });
  afterAll(() => {
    redis.disconnect();
    subscriber.disconnect();
  });

  const signal = (conversationId: number, inboundEventId: number): ConversationSignal => ({ kind: 'input', conversationId, inboundEventId, storedAt: Date.now() });

  it('reaches workers only while a worker holds the conversation, so an idle conversation wakes nobody', async () => {
    // Nobody holds conversation 7: nothing can be running there.
    expect(await publishSignal(redis, prefix, signal(7, 1))).toBe(false);

    const lease = createRedisLease(redis, conversationLeaseKey(prefix, 7), 5_000);
    expect(await lease.tryAcquire()).toBe(true);
    expect(await publishSignal(redis, prefix, signal(7, 2))).toBe(true);
    await lease.release();
    expect(await publishSignal(redis, prefix, signal(7, 3))).toBe(false);

    // Pub/sub keeps order on one connection: once this marker arrives, anything published before it has too.
    const marker = createRedisLease(redis, conversationLeaseKey(prefix, 8), 5_000);
    await marker.tryAcquire();
    await publishSignal(redis, prefix, signal(8, 99));
    await marker.release();
    await expect.poll(() => heard.some((s) => s.conversationId === 8)).toBe(true);
    expect(heard.map((s) => [s.conversationId, s.inboundEventId])).toEqual([
      [7, 2],
      [8, 99],
    ]);
  });
});
