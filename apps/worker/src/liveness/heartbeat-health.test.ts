import { describe, expect, it } from 'vitest';
import { createHeartbeatHealth } from './heartbeat-health.ts';

describe('createHeartbeatHealth', () => {
  it('judges peers from the start: a peer silent before this worker came is dead', () => {
    expect(createHeartbeatHealth(5_000, 1_000).canJudgePeers(1_000)).toBe(true);
  });

  it('after its own heartbeat failed, waits a whole dead-after window of its own beats before judging again', () => {
    const health = createHeartbeatHealth(5_000, 0);
    health.recordFailure();
    expect(health.canJudgePeers(10_000)).toBe(false);
    health.recordSuccess(20_000);
    expect(health.canJudgePeers(24_999)).toBe(false);
    health.recordSuccess(22_000);
    expect(health.canJudgePeers(25_000)).toBe(true);
  });

  it('lets the worker send only while its last beat is recent: not after a stall its peers may have declared it dead for', () => {
    const health = createHeartbeatHealth(5_000, 0);
    expect(health.mayAct(3_999)).toBe(true);
    expect(health.mayAct(4_000)).toBe(false);
    health.recordSuccess(10_000);
    expect(health.mayAct(11_000)).toBe(true);
    // Frozen for six seconds: the continuation that wakes first must not send before the next beat decides.
    expect(health.mayAct(16_000)).toBe(false);
  });
});

describe('waitToAct', () => {
  it('answers at once while the last beat is fresh, and after a stall waits for the next beat', async () => {
    const health = createHeartbeatHealth(50, Date.now());
    expect(health.waitToAct(new AbortController().signal)).toBe(true);
    health.recordSuccess(Date.now() - 1_000);
    const waited = health.waitToAct(new AbortController().signal);
    expect(waited).toBeInstanceOf(Promise);
    let settled: boolean | undefined;
    void (waited as Promise<boolean>).then((fresh) => (settled = fresh));
    await Promise.resolve();
    expect(settled).toBeUndefined();
    health.recordSuccess();
    await expect(waited).resolves.toBe(true);
  });

  it('gives up with false when the turn stops first', async () => {
    const health = createHeartbeatHealth(50, Date.now() - 1_000);
    const stop = new AbortController();
    const waited = health.waitToAct(stop.signal);
    stop.abort();
    await expect(waited).resolves.toBe(false);
    expect(health.waitToAct(stop.signal)).toBeInstanceOf(Promise);
  });
});
