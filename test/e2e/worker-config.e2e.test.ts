import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createScratchDir, repoRoot } from '@switchboard/harness';

/** Runs the worker's entry point as operators do and collects how it ends. */
async function runWorker(env: Record<string, string>, timeoutMs = 30_000): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'apps/worker/src/main.ts')], {
    cwd: repoRoot,
    // Nothing listens on port 1: if the configuration were accepted, the worker would fail later and differently.
    env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', REDIS_URL: 'redis://127.0.0.1:1', WORKER_PORT: '0', MODEL_BASE_URL: 'http://127.0.0.1:1/v1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  return { code, stderr, stdout };
}

describe('worker start-up configuration', () => {
  it('refuses an unknown AGENT_RUNTIME or a bad Codex setting with one line and exit 1, before connecting to anything', { timeout: 40_000 }, async () => {
    const { code, stderr, stdout } = await runWorker({ AGENT_RUNTIME: 'claude', CODEX_MAX_CHILDREN: '0' });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      'Invalid configuration: AGENT_RUNTIME must be openai or codex ("claude"); CODEX_MAX_CHILDREN must be between 1 and 256 ("0")',
    ]);
    expect(stdout).toBe('');
  });

  it('refuses to start without MODEL_BASE_URL, naming it, rather than talk to a simulator that is not there', { timeout: 40_000 }, async () => {
    const { code, stderr } = await runWorker({ MODEL_BASE_URL: '' });
    expect(code).toBe(1);
    expect(stderr).toContain('MODEL_BASE_URL must be a URL');
    const unset = await runWorker({ MODEL_BASE_URL: undefined as unknown as string });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain('MODEL_BASE_URL is required');
  });

  it('refuses a bad MODEL_FALLBACKS entry, or one naming an unset key variable, with one line naming the entry and no key', { timeout: 40_000 }, async () => {
    const bad = await runWorker({ MODEL_FALLBACKS: 'http://127.0.0.1:1/v1|m' });
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split('\n')).toEqual(['Invalid configuration: MODEL_FALLBACKS entry 1 has 2 fields, not 3 (each entry: base_url|model|API_KEY_ENV) (value hidden)']);
    const unset = await runWorker({ MODEL_FALLBACKS: 'http://127.0.0.1:1/v1|backup|SB_UNSET_FALLBACK_KEY', MODEL_API_KEY: 'sk-primary-secret' });
    expect(unset.code).toBe(1);
    expect(unset.stderr.trim().split('\n')).toEqual(['Invalid configuration: MODEL_FALLBACKS entry 1 (backup) names SB_UNSET_FALLBACK_KEY, which is not set']);
    expect(unset.stdout).toBe('');
  });

  it('refuses a bad MCP_SERVERS file with one line per bad server and exit 1, before connecting to anything', { timeout: 40_000 }, async () => {
    const file = join(createScratchDir('mcp-config'), 'servers.json');
    writeFileSync(file, JSON.stringify({ mcpServers: { good: { command: 'x' }, both: { command: 'x', url: 'https://a.example' }, none: {} } }));
    const { code, stderr, stdout } = await runWorker({ MCP_SERVERS: file });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      'Invalid configuration:',
      `MCP_SERVERS (${file}): server "both" has both "command" and "url"; give one`,
      `MCP_SERVERS (${file}): server "none" has neither "command" (stdio) nor "url" (Streamable HTTP)`,
    ]);
    expect(stdout).toBe('');
  });
});
