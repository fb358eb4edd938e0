import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './load-config.ts';
import { gatewayEnvSchema, workerEnvSchema } from './schemas.ts';

/** The one variable a worker cannot start without. */
const model = { MODEL_BASE_URL: 'http://127.0.0.1:4010/v1' };

describe('parseConfig', () => {
  it('applies defaults when nothing is set', () => {
    const config = parseConfig(workerEnvSchema, { ...model });
    expect(config.BUSY_INPUT_MODE).toBe('interrupt');
    expect(config.COMPRESSION_THRESHOLD).toBe(0.8);
    expect(config.RESTART_SUSPEND_THRESHOLD).toBe(3);
    expect(config.AGENT_RUNTIME).toBe('openai');
  });

  it('refuses to start a worker without MODEL_BASE_URL rather than talk to a simulator that is not there', () => {
    const error = errorOf(() => parseConfig(workerEnvSchema, {}));
    expect(error.message).toMatch(/^Invalid configuration: MODEL_BASE_URL is required/);
    expect(() => parseConfig(workerEnvSchema, { MODEL_BASE_URL: '' })).toThrow(/MODEL_BASE_URL must be a URL/);
  });

  it('names the bad variable and what is wrong in one line', () => {
    expect(() => parseConfig(gatewayEnvSchema, { PORT: 'abc' })).toThrow(ConfigError);
    const error = errorOf(() => parseConfig(workerEnvSchema, { ...model, PORT: '1', COMPRESSION_THRESHOLD: '1.5', BUSY_INPUT_MODE: 'yell' }));
    expect(error.message).not.toContain('\n');
    expect(error.message).toMatch(/COMPRESSION_THRESHOLD must be at most 1/);
    expect(error.message).toMatch(/BUSY_INPUT_MODE/);
    expect(error.code).toBe('CONFIG_INVALID');
    // The same environment fails the same way: not worth retrying (a supervisor restarting the process will not help).
    expect(error.retryable).toBe(false);
  });

  it('takes AGENT_RUNTIME openai or codex and names anything else in one line', () => {
    expect(parseConfig(workerEnvSchema, { ...model, AGENT_RUNTIME: 'codex' }).AGENT_RUNTIME).toBe('codex');
    expect(parseConfig(gatewayEnvSchema, { AGENT_RUNTIME: 'codex' }).AGENT_RUNTIME).toBe('codex');
    const error = errorOf(() => parseConfig(workerEnvSchema, { ...model, AGENT_RUNTIME: 'claude' }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toBe('Invalid configuration: AGENT_RUNTIME must be openai or codex ("claude")');
  });

  it('requires the webhook secret when Telegram is on, without echoing secrets', () => {
    expect(() => parseConfig(gatewayEnvSchema, { TELEGRAM_BOT_TOKEN: '123:abc' })).toThrow(/TELEGRAM_WEBHOOK_SECRET is required/);
    const error = errorOf(() => parseConfig(gatewayEnvSchema, { TELEGRAM_BOT_TOKEN: 'not-a-token-secretvalue' }));
    expect(error.message).toContain('TELEGRAM_BOT_TOKEN');
    expect(error.message).not.toContain('secretvalue');
  });

  it('keeps compressions to at most half of the worker pool (their locks hold connections)', () => {
    const defaults = parseConfig(workerEnvSchema, { ...model });
    expect([defaults.WORKER_DB_POOL_SIZE, defaults.COMPRESSION_CONCURRENCY]).toEqual([20, 4]);
    expect(parseConfig(workerEnvSchema, { ...model, WORKER_DB_POOL_SIZE: '4', COMPRESSION_CONCURRENCY: '2' }).COMPRESSION_CONCURRENCY).toBe(2);
    expect(() => parseConfig(workerEnvSchema, { ...model, WORKER_DB_POOL_SIZE: '4' })).toThrow(/COMPRESSION_CONCURRENCY must be at most half of WORKER_DB_POOL_SIZE/);
  });
});

describe('time and turn limits (issue 17, defect 3)', () => {
  it('has documented defaults', () => {
    const config = parseConfig(workerEnvSchema, { ...model });
    expect([config.TURN_TIMEOUT_MS, config.TOOL_WAIT_MAX_SECONDS, config.TURN_WAIT_BUDGET_SECONDS, config.USER_MAX_RUNNING_TURNS]).toEqual([300_000, 60, 120, 4]);
  });

  it('refuses values that would switch a limit off or leave a turn no time to answer', () => {
    expect(() => parseConfig(workerEnvSchema, { ...model, TURN_TIMEOUT_MS: '999' })).toThrow(/TURN_TIMEOUT_MS must be between 1000 and 3600000/);
    expect(() => parseConfig(workerEnvSchema, { ...model, TURN_TIMEOUT_MS: '86400000' })).toThrow(/TURN_TIMEOUT_MS must be between 1000 and 3600000/);
    expect(() => parseConfig(workerEnvSchema, { ...model, TOOL_WAIT_MAX_SECONDS: '601' })).toThrow(/TOOL_WAIT_MAX_SECONDS must be between 0 and 600/);
    expect(() => parseConfig(workerEnvSchema, { ...model, TURN_WAIT_BUDGET_SECONDS: '-1' })).toThrow(/TURN_WAIT_BUDGET_SECONDS must be between 0 and 3600/);
    expect(() => parseConfig(workerEnvSchema, { ...model, USER_MAX_RUNNING_TURNS: '0' })).toThrow(/USER_MAX_RUNNING_TURNS must be between 1 and 1000/);
    expect(parseConfig(workerEnvSchema, { ...model, TURN_TIMEOUT_MS: '1500', TOOL_WAIT_MAX_SECONDS: '0', USER_MAX_RUNNING_TURNS: '1' })).toMatchObject({
      TURN_TIMEOUT_MS: 1500,
      TOOL_WAIT_MAX_SECONDS: 0,
      USER_MAX_RUNNING_TURNS: 1,
    });
  });
});

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('the Codex runtime settings (docs/codex.md)', () => {
  it('has documented defaults, the workspace root resolved absolute against the working directory', () => {
    const config = parseConfig(workerEnvSchema, { ...model });
    expect(config).toMatchObject({
      CODEX_COMMAND: 'codex app-server',
      CODEX_TURN_TIMEOUT_MS: 600_000,
      CODEX_IDLE_MS: 600_000,
      CODEX_MAX_CHILDREN: 8,
      CODEX_ALLOW_FULL_ACCESS: false,
      CODEX_WORKSPACES: resolve(process.cwd(), '.codex-workspaces'),
      CODEX_HOMES: resolve(process.cwd(), '.codex-homes'),
      CODEX_ENV_PASSTHROUGH: [],
      CODEX_SANDBOX: 'bwrap',
      CODEX_SANDBOX_READ_PATHS: [],
      CODEX_SANDBOX_WRITE_PATHS: [],
    });
    expect(parseConfig(gatewayEnvSchema, {}).CODEX_ALLOW_FULL_ACCESS).toBe(false);
  });

  it('reads the settings an operator gives', () => {
    const config = parseConfig(workerEnvSchema, {
      ...model,
      CODEX_COMMAND: '/opt/codex/bin/codex app-server',
      CODEX_WORKSPACES: '/srv/codex',
      CODEX_TURN_TIMEOUT_MS: '1500',
      CODEX_IDLE_MS: '2000',
      CODEX_MAX_CHILDREN: '1',
      CODEX_ALLOW_FULL_ACCESS: 'on',
      CODEX_HOMES: '/srv/codex-homes',
      CODEX_ENV_PASSTHROUGH: ' HTTPS_PROXY, SSL_CERT_FILE ',
      CODEX_SANDBOX: 'off',
      CODEX_SANDBOX_READ_PATHS: ' /opt/codex , relative/tools',
      CODEX_SANDBOX_WRITE_PATHS: '/var/cache/codex',
    });
    expect(config).toMatchObject({
      CODEX_SANDBOX: 'off',
      CODEX_SANDBOX_READ_PATHS: ['/opt/codex', resolve(process.cwd(), 'relative/tools')],
      CODEX_SANDBOX_WRITE_PATHS: ['/var/cache/codex'],
      CODEX_HOMES: '/srv/codex-homes',
      CODEX_ENV_PASSTHROUGH: ['HTTPS_PROXY', 'SSL_CERT_FILE'],
      CODEX_COMMAND: '/opt/codex/bin/codex app-server',
      CODEX_WORKSPACES: '/srv/codex',
      CODEX_TURN_TIMEOUT_MS: 1500,
      CODEX_IDLE_MS: 2000,
      CODEX_MAX_CHILDREN: 1,
      CODEX_ALLOW_FULL_ACCESS: true,
    });
    expect(parseConfig(gatewayEnvSchema, { CODEX_ALLOW_FULL_ACCESS: 'on' }).CODEX_ALLOW_FULL_ACCESS).toBe(true);
  });

  it('stops the worker with one line naming each bad Codex setting', () => {
    const error = errorOf(() =>
      parseConfig(workerEnvSchema, {
        ...model,
        CODEX_COMMAND: '  ',
        CODEX_WORKSPACES: '',
        CODEX_TURN_TIMEOUT_MS: '0',
        CODEX_IDLE_MS: 'soon',
        CODEX_MAX_CHILDREN: '0',
        CODEX_ALLOW_FULL_ACCESS: 'yes',
        CODEX_ENV_PASSTHROUGH: 'HTTPS_PROXY,DATABASE_URL',
        CODEX_SANDBOX: 'landlock',
      }),
    );
    expect(error.message).toMatch(/CODEX_SANDBOX must be bwrap or off/);
    // A path every child shares must not open the roots that keep conversations apart.
    const roots = { ...model, CODEX_WORKSPACES: '/srv/codex', CODEX_HOMES: '/srv/homes' };
    expect(errorOf(() => parseConfig(workerEnvSchema, { ...roots, CODEX_SANDBOX_READ_PATHS: '/opt/x,/srv/codex' })).message).toMatch(/CODEX_SANDBOX_READ_PATHS must not lie inside CODEX_WORKSPACES or CODEX_HOMES/);
    expect(errorOf(() => parseConfig(workerEnvSchema, { ...roots, CODEX_SANDBOX_WRITE_PATHS: '/srv/homes/7' })).message).toMatch(/CODEX_SANDBOX_WRITE_PATHS must not lie inside/);
    // Containing a root is fine: the sandbox masks the root inside it.
    expect(parseConfig(workerEnvSchema, { ...roots, CODEX_SANDBOX_READ_PATHS: '/srv' }).CODEX_SANDBOX_READ_PATHS).toEqual(['/srv']);
    expect(errorOf(() => parseConfig(workerEnvSchema, { ...model, CODEX_WORKSPACES: '/srv/codex', CODEX_HOMES: '/srv/codex/homes' })).message).toMatch(
      /CODEX_HOMES must lie outside CODEX_WORKSPACES/,
    );
    expect(errorOf(() => parseConfig(workerEnvSchema, { ...model, CODEX_WORKSPACES: '/srv/codex', CODEX_HOMES: '/srv/codex' })).message).toMatch(/CODEX_HOMES must lie outside/);
    // Issue 30, finding 1: the worker's own secrets never reach a Codex child, not even on an operator's say-so.
    expect(error.message).toMatch(/CODEX_ENV_PASSTHROUGH must not name the worker's own secrets/);
    expect(error.message).not.toContain('\n');
    expect(error.message).toMatch(/CODEX_COMMAND must not be empty/);
    expect(error.message).toMatch(/CODEX_WORKSPACES must not be empty/);
    expect(error.message).toMatch(/CODEX_TURN_TIMEOUT_MS must be between 1000 and 14400000/);
    expect(error.message).toMatch(/CODEX_IDLE_MS must be a number/);
    expect(error.message).toMatch(/CODEX_MAX_CHILDREN must be between 1 and 256/);
    expect(error.message).toMatch(/CODEX_ALLOW_FULL_ACCESS must be on or off \("yes"\)/);
    expect(() => parseConfig(gatewayEnvSchema, { CODEX_ALLOW_FULL_ACCESS: 'true' })).toThrow(/CODEX_ALLOW_FULL_ACCESS must be on or off/);
  });
});
