import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './load-config.ts';
import { loadHooksFile } from './hooks-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'hooks-file-'));
function fileWith(content: string): string {
  const path = join(dir, `hooks-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, content);
  return path;
}

describe(loadHooksFile.name, () => {
  it('reads every hook by name', () => {
    const path = fileWith(JSON.stringify({ deploy: { secret: 's'.repeat(16), conversationId: 7, prompt: 'Deployed: {{body}}' } }));
    expect(loadHooksFile(path)).toEqual([{ name: 'deploy', secret: 's'.repeat(16), conversationId: 7, prompt: 'Deployed: {{body}}' }]);
  });

  it('refuses with one line per bad entry, naming the field and never a value', () => {
    const secret = 'short-secret-value';
    const path = fileWith(
      JSON.stringify({
        ok: { secret: 'x'.repeat(20), conversationId: 1, prompt: 'p' },
        weak: { secret: 'tiny', conversationId: 1, prompt: 'p' },
        'bad name': { secret: 'x'.repeat(20), conversationId: 1, prompt: 'p' },
        noid: { secret, conversationId: '3', prompt: 'p', extra: secret },
        list: [],
      }),
    );
    let error: unknown;
    try {
      loadHooksFile(path);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const lines = (error as ConfigError).message.split('\n');
    expect(lines).toEqual([
      'Invalid configuration: HOOKS_FILE hook "weak": secret must be at least 16 characters',
      'Invalid configuration: HOOKS_FILE hook "bad name": the name must be 1-64 characters of A-Z a-z 0-9 _ -',
      'Invalid configuration: HOOKS_FILE hook "noid": conversationId must be a number (a conversation id of the admin API)',
      'Invalid configuration: HOOKS_FILE hook "noid": unknown field "extra" (fields: secret, conversationId, prompt)',
      'Invalid configuration: HOOKS_FILE hook "list": must be an object {"secret", "conversationId", "prompt"}',
    ]);
    expect((error as ConfigError).message).not.toContain(secret);
    expect((error as ConfigError).message).not.toContain('tiny');
  });

  it('refuses a file that is not JSON or not an object, or that cannot be read', () => {
    expect(() => loadHooksFile(fileWith('{"a": '))).toThrow(/^Invalid configuration: HOOKS_FILE is not valid JSON/);
    expect(() => loadHooksFile(fileWith('[]'))).toThrow(/HOOKS_FILE must hold a JSON object/);
    expect(() => loadHooksFile(join(dir, 'missing.json'))).toThrow(/HOOKS_FILE cannot be read/);
  });
});
