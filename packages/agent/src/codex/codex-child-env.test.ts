import { describe, expect, it } from 'vitest';
import { isWorkerSecretName } from '@switchboard/core';
import { buildCodexChildEnv, readProviderKeyName } from './codex-child-env.ts';

const workerEnv = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/switchboard',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  TERM: 'xterm',
  DATABASE_URL: 'postgres://switchboard:hunter2@db/switchboard',
  REDIS_URL: 'redis://:hunter3@redis:6379',
  EVENT_WEBHOOK_URLS: 'https://hooks.example/secret-path',
  ADMIN_TOKEN: 'admin-secret',
  TELEGRAM_BOT_TOKEN: '123:abc',
  SLACK_BOT_TOKEN: 'xoxb-1',
  DISCORD_BOT_TOKEN: 'discord-1',
  MODEL_API_KEY: 'model-key',
  OPENAI_API_KEY: 'sk-codex',
  CODEX_HOME: '/home/switchboard/.codex',
  TMPDIR: '/tmp',
  HTTPS_PROXY: 'http://proxy:3128',
  PGPASSWORD: 'hunter2',
};

const conversationDirs = { home: '/data/homes/7', codexHome: '/data/homes/7/.codex', tmpDir: '/data/homes/7/tmp' };

describe('buildCodexChildEnv', () => {
  it('gives the child the allow-list and the conversation’s own directories, nothing else of the worker’s', () => {
    const env = buildCodexChildEnv({ source: workerEnv, ...conversationDirs, credentialName: 'OPENAI_API_KEY', passthrough: [] });
    expect(env).toEqual({
      PATH: '/usr/bin:/bin',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TERM: 'xterm',
      OPENAI_API_KEY: 'sk-codex',
      HOME: '/data/homes/7',
      CODEX_HOME: '/data/homes/7/.codex',
      TMPDIR: '/data/homes/7/tmp',
    });
  });

  it('passes the names an operator chose, but never a worker secret, not even named as the credential', () => {
    const env = buildCodexChildEnv({
      source: workerEnv,
      ...conversationDirs,
      credentialName: 'DATABASE_URL',
      passthrough: ['HTTPS_PROXY', 'REDIS_URL', 'ADMIN_TOKEN', 'TELEGRAM_BOT_TOKEN', 'PGPASSWORD', 'HOME', 'CODEX_HOME', 'TMPDIR', 'NOT_SET'],
    });
    expect(env).toEqual({ PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TERM: 'xterm', HTTPS_PROXY: 'http://proxy:3128', ...conversationDirsAsEnv() });
    expect(Object.values(env).join('\n')).not.toMatch(/hunter|admin-secret|123:abc|xoxb|sk-codex|model-key/);
  });

  it('gives no credential when the provider names none, no TERM when the worker has none, and a PATH when the worker has none', () => {
    const env = buildCodexChildEnv({ source: { MODEL_API_KEY: 'model-key' }, ...conversationDirs, credentialName: null, passthrough: [] });
    expect(env).toEqual({ PATH: '/usr/local/bin:/usr/bin:/bin', ...conversationDirsAsEnv() });
  });

  it('passes a provider key an operator named in config.toml, MODEL_API_KEY included', () => {
    const env = buildCodexChildEnv({ source: workerEnv, ...conversationDirs, credentialName: 'MODEL_API_KEY', passthrough: [] });
    expect(env.MODEL_API_KEY).toBe('model-key');
    expect(env.OPENAI_API_KEY).toBeUndefined();
  });
});

describe('isWorkerSecretName', () => {
  it('names the worker’s secrets and where its data lives', () => {
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'ADMIN_TOKEN', 'EVENT_WEBHOOK_URLS', 'TELEGRAM_BOT_TOKEN', 'SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET', 'DISCORD_BOT_TOKEN', 'PGPASSWORD']) {
      expect(isWorkerSecretName(name), name).toBe(true);
    }
    for (const name of ['OPENAI_API_KEY', 'HTTPS_PROXY', 'SSL_CERT_FILE']) expect(isWorkerSecretName(name), name).toBe(false);
  });
});

describe('readProviderKeyName', () => {
  it('is OPENAI_API_KEY for Codex’s default provider, with no config or none chosen', () => {
    expect(readProviderKeyName(null)).toBe('OPENAI_API_KEY');
    expect(readProviderKeyName('model = "gpt-5"\n')).toBe('OPENAI_API_KEY');
  });

  it('is the env_key of the chosen provider, at the top or in the selected profile', () => {
    const config = [
      'model_provider = "sim" # the simulator',
      'profile = \'work\'',
      '[model_providers.sim]',
      'base_url = "http://127.0.0.1:4010/v1"',
      'env_key = "SIM_KEY"',
      '[model_providers."corp"]',
      "env_key = 'CORP_KEY'",
      '[profiles.work]',
      'model_provider = "corp"',
    ].join('\n');
    expect(readProviderKeyName(config)).toBe('CORP_KEY');
    expect(readProviderKeyName(config.replace("profile = 'work'", ''))).toBe('SIM_KEY');
  });

  it('is null for a provider that names no key (a local one)', () => {
    expect(readProviderKeyName('model_provider = "ollama"\n[model_providers.ollama]\nbase_url = "http://localhost:11434/v1"\n')).toBeNull();
  });
});

function conversationDirsAsEnv() {
  return { HOME: conversationDirs.home, CODEX_HOME: conversationDirs.codexHome, TMPDIR: conversationDirs.tmpDir };
}
