import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisPrefix, redisUrl } from '@switchboard/harness/test-env';
import { publishApprovalSignal, subscribeApprovalSignals, type ApprovalSignal } from './approval-signals.ts';
import { publishSignal, subscribeSignals, type ConversationSignal } from './conversation-signals.ts';
import { conversationLeaseKey, createRedisLease } from './redis-lease.ts';

describe('approval signals', () => {
  const prefix = createRedisPrefix();
  let redis: Redis;
  let subscriber: Redis;
  const approvals: ApprovalSignal[] = [];
  const signals: ConversationSignal[] = [];

  beforeAll(async () => {
    redis = new Redis(redisUrl());
    subscriber = new Redis(redisUrl());
    // One subscriber connection carries both channels, as in the worker.
    await subscribeSignals(subscriber, prefix, (signal) => signals.push(signal));
    await subscribeApprovalSignals(subscriber, prefix, (signal) => approvals.push(signal));
  });
  afterAll(() => {
    redis.disconnect();
    subscriber.disconnect();
  });

  it('reach the waiting worker whether or not the lease is held, and never look like a stop or an interrupt', async () => {
    await publishApprovalSignal(redis, prefix, { kind: 'decided', conversationId: 5, approvalId: 9 });
    await redis.publish(`${prefix}:approvals`, 'not json');
    const lease = createRedisLease(redis, conversationLeaseKey(prefix, 5), 5_000);
    await lease.tryAcquire();
    await publishSignal(redis, prefix, { kind: 'input', conversationId: 5, inboundEventId: 1, storedAt: Date.now() });
    await publishApprovalSignal(redis, prefix, { kind: 'notice', conversationId: 5, approvalId: 0 });
    await lease.release();
    await expect.poll(() => approvals.length).toBe(2);
    expect(approvals).toEqual([
      { kind: 'decided', conversationId: 5, approvalId: 9 },
      { kind: 'notice', conversationId: 5, approvalId: 0 },
    ]);
    expect(signals.map((s) => s.kind)).toEqual(['input']);
  });
});
