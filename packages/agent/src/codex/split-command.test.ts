import { describe, expect, it } from 'vitest';
import { splitCommandLine } from './split-command.ts';

describe('splitCommandLine', () => {
  it('splits on whitespace without a shell', () => {
    expect(splitCommandLine('codex  app-server')).toEqual(['codex', 'app-server']);
    expect(splitCommandLine('codex app-server; rm -rf /')).toEqual(['codex', 'app-server;', 'rm', '-rf', '/']);
  });

  it('keeps quoted spaces, escapes and empty quoted words', () => {
    expect(splitCommandLine(`"/opt/my tools/node" '/a b/fake.mjs' --x=\\"y\\" ""`)).toEqual(['/opt/my tools/node', '/a b/fake.mjs', '--x="y"', '']);
    expect(splitCommandLine(`"say \\"hi\\" \\\\ there"`)).toEqual(['say "hi" \\ there']);
    expect(splitCommandLine(`'$HOME stays literal'`)).toEqual(['$HOME stays literal']);
  });

  it('refuses an empty command and an unterminated quote', () => {
    expect(splitCommandLine('   ')).toBeNull();
    expect(splitCommandLine('codex "app-server')).toBeNull();
  });
});
