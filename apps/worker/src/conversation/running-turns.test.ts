import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisPrefix, redisUrl } from '@switchboard/harness/test-env';
import { createLogger } from '@switchboard/logger';
import { conversationLeaseKey, createRedisLease, publishSignal, signalChannel, type ConversationSignal } from '@switchboard/queue';
import { createActiveTurn, type ActiveTurn } from '../turn/active-turn.ts';
import { createRunningTurns, listenForSignals } from './running-turns.ts';

const metrics = { observeInterrupt: () => undefined };
const turnOf = (conversationId: number, mode: 'interrupt' | 'queue' = 'interrupt'): ActiveTurn => createActiveTurn(conversationId, mode, metrics);
const input = (conversationId: number, inboundEventId: number): ConversationSignal => ({ kind: 'input', conversationId, inboundEventId, storedAt: Date.now() });

describe('running turns', () => {
  it('hands a signal to its conversation’s turn only', () => {
    const turns = createRunningTurns();
    const mine = turnOf(1);
    const other = turnOf(2);
    turns.register(mine);
    turns.register(other);
    mine.dispatch({ kind: 'taken', upTo: 10 });
    other.dispatch({ kind: 'taken', upTo: 20 });

    expect(turns.dispatch(input(1, 11))).toBe(mine);
    expect(mine.state.stopReason).toBe('interrupt');
    expect(mine.controller.signal.aborted).toBe(true);
    expect(other.state.stopReason).toBeUndefined();
    // Nothing runs here for conversation 3: the signal is for another worker, or for no turn at all.
    expect(turns.dispatch(input(3, 1))).toBeUndefined();
  });

  it('forgets only the turn it is told to, never the newer turn of the same conversation', () => {
    const turns = createRunningTurns();
    const old = turnOf(1);
    const newer = turnOf(1);
    turns.register(old);
    turns.register(newer);
    expect(turns.holds(old)).toBe(false);
    expect(turns.size()).toBe(1);

    // The loop that lost the lease finishes after the new one registered: the new turn stays.
    turns.forget(old);
    expect(turns.holds(newer)).toBe(true);
    newer.dispatch({ kind: 'taken', upTo: 5 });
    expect(turns.dispatch(input(1, 6))).toBe(newer);

    turns.forget(newer);
    expect(turns.holds(newer)).toBe(false);
    expect(turns.size()).toBe(0);
  });

  it('keeps a signal that arrives before the turn knows its input, applied once it does', () => {
    const turns = createRunningTurns();
    const active = turnOf(1);
    turns.register(active);
    turns.dispatch(input(1, 8));
    expect(active.state.stopReason).toBeUndefined();
    active.dispatch({ kind: 'taken', upTo: 7 });
    expect(active.state.stopReason).toBe('interrupt');
  });

  it('stops every turn at once when the drain window closes', () => {
    const turns = createRunningTurns();
    const all = [turnOf(1), turnOf(2), turnOf(3, 'queue')];
    for (const active of all) turns.register(active);
    turns.stopAll('shutdown');
    expect(all.map((active) => [active.state.stopReason, active.controller.signal.aborted])).toEqual(all.map(() => ['shutdown', true]));
  });
});

describe('running turns listening for signals', () => {
  const prefix = createRedisPrefix();
  const log = createLogger('test', 'silent');
  const turns = createRunningTurns();
  const inputs: ActiveTurn[] = [];
  let redis: Redis;
  let subscriber: Redis;

  beforeAll(async () => {
    redis = new Redis(redisUrl());
    subscriber = new Redis(redisUrl());
    await listenForSignals({ subscriber, prefix, turns, onInput: (active) => inputs.push(active), log });
  });
  afterAll(() => {
    redis.disconnect();
    subscriber.disconnect();
  });

  it('hands the gateway’s signal to the turn running here and tells of the new input', async () => {
    const active = turnOf(41, 'queue');
    turns.register(active);
    active.dispatch({ kind: 'taken', upTo: 1 });
    const lease = createRedisLease(redis, conversationLeaseKey(prefix, 41), 5_000);
    expect(await lease.tryAcquire()).toBe(true);

    expect(await publishSignal(redis, prefix, input(41, 2))).toBe(true);
    await expect.poll(() => inputs.length).toBe(1);
    expect(inputs[0]).toBe(active);
    // Busy mode queue: the message waits for a later turn, this one goes on.
    expect(active.state.stopReason).toBeUndefined();

    expect(await publishSignal(redis, prefix, { kind: 'stop', conversationId: 41, inboundEventId: 3, storedAt: Date.now() })).toBe(true);
    await expect.poll(() => active.state.stopReason).toBe('stop');
    expect(active.controller.signal.aborted).toBe(true);
    // A stop is no new input to show waiting.
    expect(inputs).toHaveLength(1);
    await lease.release();
  });

  it('ignores a malformed signal and goes on hearing the next', async () => {
    const active = turnOf(42);
    turns.register(active);
    active.dispatch({ kind: 'taken', upTo: 1 });
    const lease = createRedisLease(redis, conversationLeaseKey(prefix, 42), 5_000);
    await lease.tryAcquire();
    await redis.publish(signalChannel(prefix), '{"kind":"input"');
    expect(await publishSignal(redis, prefix, input(42, 2))).toBe(true);
    await expect.poll(() => active.state.stopReason).toBe('interrupt');
    await lease.release();
  });
});
