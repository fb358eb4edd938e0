import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoadTestOptions, defaultTranscriptPath, runLoadTest, type LoadTestReport } from '@switchboard/loadtest';
import { TestSystem } from '../support/system.ts';

function expectEveryReplyOnce(report: LoadTestReport, turns: number): void {
  expect(report.errors).toMatchObject({ total: 0 });
  expect(report.turns).toMatchObject({ sent: turns, delivered: turns, answered: turns, timeouts: 0 });
  expect(report.replies).toMatchObject({ expected: turns, received: turns, lost: 0, duplicated: 0, outOfOrder: 0, mismatched: 0, unexpected: 0 });
  expect(report.ok).toBe(true);
}

/**
 * The real corpus sits beside the repository (../shared, CDLA-Sharing), not in
 * it; where a checkout has no ../shared, a few made-up conversations in the
 * same format stand in, so the test still runs.
 */
function resolveTranscripts(dir: string): string {
  if (existsSync(defaultTranscriptPath)) return defaultTranscriptPath;
  const path = join(dir, 'transcripts.json');
  const conversation = (n: number) => ({
    content: Array.from({ length: 12 }, (_, i) => ({ agent: i % 2 === 0 ? 'agent_1' : 'agent_2', message: `conversation ${n}, line ${i}: what do you think & why?` })),
  });
  writeFileSync(path, JSON.stringify(Object.fromEntries(Array.from({ length: 8 }, (_, n) => [`t_${n}`, conversation(n)]))));
  return path;
}

describe(runLoadTest.name, () => {
  let system: TestSystem;
  let outRoot: string;
  let transcripts: string;

  beforeAll(async () => {
    // queue: every line of a burst gets its own turn, so every reply is owed and the check is exact.
    system = await TestSystem.start({ workerEnv: { BUSY_INPUT_MODE: 'queue' }, slack: true, discord: true });
    outRoot = mkdtempSync(join(tmpdir(), 'sb-loadtest-'));
    transcripts = resolveTranscripts(outRoot);
  });
  afterAll(async () => {
    await system?.close();
    if (outRoot) rmSync(outRoot, { recursive: true, force: true });
  });

  describe('against a running system', () => {
    it('replays transcripts, gets every recorded reply once and in order, and writes the report', async () => {
      const outDir = join(outRoot, 'plain');
      const report = await runLoadTest(
        createLoadTestOptions({
          transcripts,
          conversations: 5,
          maxTurns: 4,
          concurrency: 5,
          settleMs: 200,
          measureOverhead: true,
          target: { simUrl: system.simUrl, gatewayUrls: [system.gateway.url] },
          outDir,
        }),
      );

      expectEveryReplyOnce(report, 20);
      expect(report.conversations).toEqual({ started: 5, finished: 5 });
      expect(report.endToEndMs.count).toBe(20);
      expect(report.ackMs.count).toBe(20);
      expect(report.overheadMs?.count).toBe(20);
      expect(report.timeline.reduce((n, point) => n + point.turns, 0)).toBe(20);

      const json = JSON.parse(readFileSync(join(outDir, 'report.json'), 'utf8')) as LoadTestReport;
      expect(json.replies).toEqual(report.replies);
      const html = readFileSync(join(outDir, 'report.html'), 'utf8');
      expect(html).toContain('<svg');
      expect(html).toContain('Throughput over time');
      expect(html).not.toMatch(/<script[^>]+src=|https?:\/\/(?!127\.0\.0\.1|www\.w3\.org)/);
    });

    it('owes every line its reply when lines arrive while the previous turn runs (busy mode queue)', async () => {
      const outDir = join(outRoot, 'burst');
      const report = await runLoadTest(
        createLoadTestOptions({
          transcripts,
          conversations: 4,
          maxTurns: 5,
          concurrency: 4,
          burstFraction: 0.6,
          modelLatencyMs: 40,
          busyMode: 'queue',
          settleMs: 200,
          target: { simUrl: system.simUrl },
          outDir,
        }),
      );

      expectEveryReplyOnce(report, 20);
      expect(report.options).toMatchObject({ burstFraction: 0.6 });
      expect(existsSync(join(outDir, 'report.html'))).toBe(true);
    });

    it('mixes platforms: Telegram and Slack signed webhooks, Discord over its Gateway', async () => {
      const report = await runLoadTest(
        createLoadTestOptions({
          transcripts,
          conversations: 6,
          maxTurns: 3,
          concurrency: 6,
          platforms: ['telegram', 'slack', 'discord'],
          settleMs: 200,
          target: { simUrl: system.simUrl },
          outDir: join(outRoot, 'mix'),
        }),
      );

      expectEveryReplyOnce(report, 18);
      expect(Object.keys(report.platforms).sort()).toEqual(['discord', 'slack', 'telegram']);
      expect(report.platforms.slack).toMatchObject({ conversations: 2, answered: 6, ackMs: { count: 6 } });
      // Discord pushes messages over a WebSocket: there is no webhook answer to time.
      expect(report.platforms.discord).toMatchObject({ conversations: 2, answered: 6, ackMs: { count: 0 } });
      expect(report.ackMs.count).toBe(12);
    });
  });
});
