import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './load-config.ts';
import { gatewayEnvSchema, workerEnvSchema } from './schemas.ts';

describe(parseConfig.name, () => {
  it('reports every bad variable at once, the rules across variables included, each once', () => {
    const gateway = errorOf(() => parseConfig(gatewayEnvSchema, { PORT: 'abc', LOG_LEVEL: 'loud', TELEGRAM_BOT_TOKEN: '123:abc' }));
    expect(gateway.message).toMatch(/PORT must be a port number/);
    expect(gateway.message).toMatch(/LOG_LEVEL/);
    expect(gateway.message).toMatch(/TELEGRAM_WEBHOOK_SECRET is required when TELEGRAM_BOT_TOKEN is set/);
    const worker = errorOf(() => parseConfig(workerEnvSchema, { BUSY_INPUT_MODE: 'yell', WORKER_DB_POOL_SIZE: '4', COMPRESSION_CONCURRENCY: '3' }));
    expect(worker.message).toMatch(/BUSY_INPUT_MODE/);
    expect(worker.message).toMatch(/COMPRESSION_CONCURRENCY must be at most half of WORKER_DB_POOL_SIZE/);
    // A rule about a variable that is itself bad adds nothing: the variable is named once.
    const bad = errorOf(() => parseConfig(workerEnvSchema, { PORT: 'abc', WORKER_DB_POOL_SIZE: '4', COMPRESSION_CONCURRENCY: 'x' }));
    expect(bad.message.match(/COMPRESSION_CONCURRENCY/g)).toHaveLength(1);
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
