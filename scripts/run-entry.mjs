#!/usr/bin/env node
// `npm run start:gateway` and the other process scripts: run dist/<name>.js
// when `npm run build` made it, and the TypeScript sources through tsx
// otherwise. A dist/ older than the sources it was built from is not run
// while tsx is there to run the sources, so an edit after a build is never
// silently ignored; without tsx (production, after `npm prune --omit=dev`)
// the build is all there is.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const sources = {
  gateway: 'apps/gateway/src/main.ts',
  worker: 'apps/worker/src/main.ts',
  sim: 'apps/sim/src/main.ts',
  migrate: 'packages/db/src/migrate-cli.ts',
  doctor: 'scripts/doctor.ts',
  pair: 'scripts/pair.ts',
};

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

function sourcesNewerThan(builtMs) {
  const trees = ['apps', 'packages', 'scripts'].map((dir) => join(root, dir)).filter((dir) => existsSync(dir));
  return trees.some((dir) => newestMtime(dir) > builtMs);
}

function hasTsx() {
  try {
    createRequire(import.meta.url).resolve('tsx/esm/api');
    return true;
  } catch {
    return false;
  }
}

function warn(msg) {
  // One JSON line in pino's shape: the process's own logger does not exist yet.
  process.stderr.write(`${JSON.stringify({ level: 40, time: Date.now(), name: 'run-entry', msg })}\n`);
}

const name = process.argv[2];
const source = sources[name];
if (!source) {
  process.stderr.write(`usage: node scripts/run-entry.mjs <${Object.keys(sources).join('|')}> [args…]\n`);
  process.exit(2);
}
process.argv.splice(2, 1);
const built = join(root, 'dist', `${name}.js`);
const tsx = hasTsx();
let runBuilt = existsSync(built);
if (runBuilt && tsx && existsSync(join(root, source)) && sourcesNewerThan(statSync(built).mtimeMs)) {
  warn(`dist/${name}.js is older than the sources; running the sources (run \`npm run build\` to refresh it)`);
  runBuilt = false;
}
if (runBuilt) {
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(built).href);
} else if (tsx) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, source)).href);
} else {
  process.stderr.write(`neither dist/${name}.js nor tsx is here: run \`npm run build\` (or \`npm ci\` for the dev tools)\n`);
  process.exit(1);
}
