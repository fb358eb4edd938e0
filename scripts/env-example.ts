/**
 * `npm run env:example`: writes .env.example from the zod schemas
 * (scripts/lib/env-example.ts). `--check` exits 1 when the committed file
 * differs, for CI and a test.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderEnvExample } from './lib/env-example.ts';
import { repoRoot } from '@switchboard/harness';

const path = join(repoRoot, '.env.example');
const expected = renderEnvExample();
if (process.argv.includes('--check')) {
  const current = (() => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return '';
    }
  })();
  if (current !== expected) {
    console.error('.env.example is out of date: run `npm run env:example` and commit it');
    process.exit(1);
  }
  console.log('.env.example is up to date');
} else {
  writeFileSync(path, expected);
  console.log(`wrote ${path}`);
}
