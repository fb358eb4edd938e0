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
});
