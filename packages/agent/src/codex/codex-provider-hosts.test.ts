import { describe, expect, it } from 'vitest';
import { isAllowedDestination, parseOrigin, readProviderHosts } from './codex-provider-hosts.ts';

const read = (configToml: string | null, extra: { env?: Record<string, string>; allow?: string[] } = {}) =>
  readProviderHosts({ configToml, childEnv: extra.env ?? {}, allowHosts: extra.allow ?? [] });

describe('where a Codex child may connect (CODEX_SANDBOX_NETWORK=provider)', () => {
  it('is the base_url of the provider config.toml chooses, at the top or in the selected profile', () => {
    const config = ['model_provider = "corp"', 'profile = "work"', '[model_providers.corp]', 'base_url = "https://LLM.corp.example/v1"', '[model_providers.local]', 'base_url = "http://127.0.0.1:4010/v1"', '[profiles.work]', 'model_provider = "local"'].join('\n');
    expect(read(config)).toEqual({ provider: 'local', known: true, destinations: [{ host: '127.0.0.1', port: 4010 }] });
    expect(read(config.replace('profile = "work"', ''))).toEqual({ provider: 'corp', known: true, destinations: [{ host: 'llm.corp.example', port: 443 }] });
  });

  it("is OpenAI's API, ChatGPT and its login for Codex's default provider, OPENAI_BASE_URL replacing the API", () => {
    expect(read(null).destinations).toEqual([
      { host: 'api.openai.com', port: 443 },
      { host: 'chatgpt.com', port: 443 },
      { host: 'auth.openai.com', port: 443 },
    ]);
    expect(read('model_provider = "openai"', { env: { OPENAI_BASE_URL: 'http://[::1]:8080/v1' } }).destinations[0]).toEqual({ host: '::1', port: 8080 });
  });

  it('is only CODEX_SANDBOX_ALLOW_HOSTS for a provider with no base_url the worker can read, which it says', () => {
    expect(read('model_provider = "ollama"', { allow: ['localhost:11434', 'mcp.internal:8443'] })).toEqual({
      provider: 'ollama',
      known: false,
      destinations: [{ host: 'localhost', port: 11434 }, { host: 'mcp.internal', port: 8443 }],
    });
  });

  it('compares host and port exactly, the host case-insensitively and an IPv6 literal without brackets', () => {
    const allowed = [{ host: 'api.openai.com', port: 443 }, { host: '::1', port: 8080 }];
    expect(isAllowedDestination(allowed, { host: 'API.OpenAI.com', port: 443 })).toBe(true);
    expect(isAllowedDestination(allowed, { host: '[::1]', port: 8080 })).toBe(true);
    expect(isAllowedDestination(allowed, { host: 'api.openai.com', port: 80 })).toBe(false);
    expect(isAllowedDestination(allowed, { host: 'api.openai.com.evil.example', port: 443 })).toBe(false);
    expect(isAllowedDestination(allowed, { host: '127.0.0.1', port: 6379 })).toBe(false);
  });

  it('reads a CONNECT target or a URL, and nothing that is not one', () => {
    expect(parseOrigin('tcp://example.com:8443')).toEqual({ host: 'example.com', port: 8443 });
    expect(parseOrigin('tcp://[2001:db8::1]:443')).toEqual({ host: '2001:db8::1', port: 443 });
    expect(parseOrigin('http://example.com/x')).toEqual({ host: 'example.com', port: 80 });
    for (const bad of ['tcp://example.com', 'tcp://:443', 'not a url', 'tcp://a b:1']) expect(parseOrigin(bad), bad).toBeUndefined();
  });
});
