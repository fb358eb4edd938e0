import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@switchboard/harness';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The boundaries of README's "Boundaries" section are lint rules; this proves
// they bite on a probe file in each place, so a changed config cannot quietly
// drop one, and that the tree as it stands keeps them.
// The house limits on functions (issue 32) are checked with them.
const boundaryRules = new Set(['no-restricted-imports', 'no-restricted-syntax', 'max-lines-per-function', 'max-params']);

async function lintProbe(path: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: repoRoot });
  const [result] = await eslint.lintText(code, { filePath: join(repoRoot, path) });
  return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

describe('a package never imports an app', () => {
  it.each([
    ['by package name', "import { buildGateway } from '@switchboard/gateway';\nexport const probe = buildGateway;\n", 'no-restricted-imports'],
    ['a subpath of one', "export { probe } from '@switchboard/worker/src/turn/run-turn.ts';\n", 'no-restricted-imports'],
    ['by relative path', "import { probe } from '../../../apps/worker/src/turn/run-turn.ts';\nexport { probe };\n", 'no-restricted-imports'],
    ['by import()', "export const probe = () => import('../../../apps/sim/src/index.ts');\n", 'no-restricted-syntax'],
  ])('refuses %s', async (_name, code, rule) => {
    expect(await lintProbe('packages/queue/src/lint-probe.ts', code)).toContain(rule);
  });

  it('refuses it from a package test too', async () => {
    const code = "import { probe } from '@switchboard/loadtest';\nexport { probe };\n";
    expect(await lintProbe('packages/db/src/queries/lint-probe.test.ts', code)).toContain('no-restricted-imports');
  });

  it('accepts a package importing a package, and an app importing one', async () => {
    const code = "import { splitMessage } from '@switchboard/core';\nexport const probe = splitMessage;\n";
    expect(await lintProbe('packages/platforms/src/lint-probe.ts', code)).toEqual([]);
    expect(await lintProbe('apps/gateway/src/lint-probe.ts', code)).toEqual([]);
  });
});

describe('apps/loadtest never imports scripts/', () => {
  it.each([
    ['apps/loadtest/src/lint-probe.ts', "import { probe } from '../../../scripts/lib/demo-model.ts';\nexport { probe };\n", 'no-restricted-imports'],
    ['apps/loadtest/src/chaos/lint-probe.ts', "export { probe } from '../../../../scripts/lib/doctor-checks.ts';\n", 'no-restricted-imports'],
    ['apps/loadtest/src/bench/lint-probe.ts', "export const probe = () => import('../../../../scripts/lib/demo-model.ts');\n", 'no-restricted-syntax'],
  ])('refuses %s', async (path, code, rule) => {
    expect(await lintProbe(path, code)).toContain(rule);
  });

  it('accepts the shared helpers from @switchboard/harness', async () => {
    const code = "import { repoRoot } from '@switchboard/harness';\nexport const probe = repoRoot;\n";
    expect(await lintProbe('apps/loadtest/src/chaos/lint-probe.ts', code)).toEqual([]);
  });
});

describe('packages/core does no I/O', () => {
  it.each([
    ['node:fs', "import { readFileSync } from 'node:fs';\nexport const probe = readFileSync;\n", 'no-restricted-imports'],
    ['fs/promises', "import { readFile } from 'fs/promises';\nexport const probe = readFile;\n", 'no-restricted-imports'],
    ['node:child_process', "export { spawn } from 'node:child_process';\n", 'no-restricted-imports'],
    ['postgres', "import postgres from 'postgres';\nexport const probe = postgres;\n", 'no-restricted-imports'],
    ['drizzle-orm', "import { sql } from 'drizzle-orm';\nexport const probe = sql;\n", 'no-restricted-imports'],
    ['ioredis', "import { Redis } from 'ioredis';\nexport const probe = Redis;\n", 'no-restricted-imports'],
    ['openai', "import type OpenAI from 'openai';\nexport type Probe = OpenAI;\n", 'no-restricted-imports'],
    ['@fastify/helmet', "import helmet from '@fastify/helmet';\nexport const probe = helmet;\n", 'no-restricted-imports'],
    ['another Switchboard package', "import { createDbClient } from '@switchboard/db';\nexport const probe = createDbClient;\n", 'no-restricted-imports'],
    ['import()', "export const probe = () => import('node:net');\n", 'no-restricted-syntax'],
    ['require()', "declare const require: (id: string) => unknown;\nexport const probe = require('node:http');\n", 'no-restricted-syntax'],
  ])('refuses %s', async (_name, code, rule) => {
    expect(await lintProbe('packages/core/src/lint-probe.ts', code)).toContain(rule);
  });

  it('accepts node:crypto and the pure libraries it uses', async () => {
    const code = "import { createHash } from 'node:crypto';\nimport { encode } from 'gpt-tokenizer';\nexport const probe = [createHash, encode];\n";
    expect(await lintProbe('packages/core/src/lint-probe.ts', code)).toEqual([]);
  });

  it('keeps the SQL rules in core, where the boundary rules are set again', async () => {
    const code = 'declare const db: { execute(s: unknown): unknown };\nexport const q = (id: string) => db.execute("select " + id);\n';
    expect(await lintProbe('packages/core/src/lint-probe.ts', code)).toContain('no-restricted-syntax');
  });
});

describe('one database handle: db.$client only in packages/db', () => {
  const code = 'declare const db: { $client: () => unknown };\nexport const probe = () => db.$client();\n';
  const destructured = 'declare const db: { $client: () => unknown };\nconst { $client } = db;\nexport const probe = $client;\n';

  it.each(['apps/gateway/src/lint-probe.ts', 'apps/worker/src/lint-probe.ts', 'packages/actions/src/lint-probe.ts', 'scripts/lint-probe.ts'])('refuses it in %s', async (path) => {
    expect(await lintProbe(path, code)).toContain('no-restricted-properties');
    expect(await lintProbe(path, destructured)).toContain('no-restricted-properties');
  });

  it('accepts it in packages/db, in tests and in the load tools', async () => {
    for (const path of ['packages/db/src/queries/lint-probe.ts', 'apps/worker/src/lint-probe.test.ts', 'test/support/lint-probe.ts', 'apps/loadtest/src/chaos/lint-probe.ts']) {
      expect(await lintProbe(path, code), path).toEqual([]);
    }
  });

  it('keeps the SQL string rules where it is refused', async () => {
    const unsafe = 'export const q = (sql: { unsafe(s: string): unknown }, id: string) => sql.unsafe("select " + id);\n';
    expect(await lintProbe('apps/gateway/src/lint-probe.ts', unsafe)).toContain('no-restricted-properties');
  });
});

describe('the house limits on functions, in all product code', () => {
  const fiveParameters = 'export function probe(a: number, b: number, c: number, d: number, e: number): number {\n  return a + b + c + d + e;\n}\n';
  const longBody = `export function probe(): number {\n  let n = 0;\n${'  n += 1;\n'.repeat(60)}  return n;\n}\n`;

  it.each(['apps/gateway/src/lint-probe.ts', 'apps/sim/src/lint-probe.ts', 'packages/platforms/src/lint-probe.ts', 'packages/core/src/lint-probe.ts'])('refuses a fifth parameter and a 61-line function in %s', async (path) => {
    expect(await lintProbe(path, fiveParameters)).toContain('max-params');
    expect(await lintProbe(path, longBody)).toContain('max-lines-per-function');
  });

  it('leaves tests to their own shape', async () => {
    expect(await lintProbe('apps/gateway/src/lint-probe.test.ts', fiveParameters + longBody.replace('probe', 'probe2'))).toEqual([]);
  });
});

describe('the tree as it stands', () => {
  it('keeps every boundary and the limits on functions', async () => {
    const eslint = new ESLint({ cwd: repoRoot, ruleFilter: ({ ruleId }) => boundaryRules.has(ruleId) });
    const results = await eslint.lintFiles(['apps', 'packages']);
    const broken = results.flatMap((result) => result.messages.map((m) => `${result.filePath.slice(repoRoot.length + 1)}:${m.line} ${m.message}`));
    expect(broken).toEqual([]);
    // Type-aware linting of the whole tree: about 10 s on a quiet 2-core machine, past 30 s when the e2e files run beside it.
  }, 120_000);

  it('has every workspace declare the workspace packages it imports', () => {
    const undeclared: string[] = [];
    for (const workspace of ['apps', 'packages'].flatMap((dir) => readdirSync(join(repoRoot, dir)).map((name) => join(dir, name)))) {
      const manifest = JSON.parse(readFileSync(join(repoRoot, workspace, 'package.json'), 'utf8')) as {
        name: string;
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
      };
      const declared = new Set([manifest.name, ...Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })]);
      for (const name of importedWorkspaces(join(repoRoot, workspace, 'src'))) {
        if (!declared.has(name)) undeclared.push(`${workspace} imports ${name}`);
      }
    }
    expect(undeclared).toEqual([]);
  });
});

function importedWorkspaces(dir: string): Set<string> {
  const names = new Set<string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    for (const match of text.matchAll(/(?:from|import\()\s*'(@switchboard\/[a-z-]+)/g)) names.add(match[1]!);
  }
  return names;
}
