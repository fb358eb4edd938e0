#!/usr/bin/env node
// `npm run build`: bundles each process's entry point into dist/ with esbuild
// (source maps on), so production runs plain `node` without tsx or dev
// packages. Our workspace code and the pure-JavaScript libraries listed as
// devDependencies (openai, drizzle-orm, zod, the tokenizer's one encoding…)
// are carried inside the bundle; what package.json lists as `dependencies`
// stays external and is loaded from node_modules at run time: those are the
// packages that read their own files (bull-board's UI, swagger-ui's assets,
// mathjs for the calculator thread, pino's worker transports) or ship native
// code, which a bundle would break.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
export const entryPoints = {
  gateway: 'apps/gateway/src/main.ts',
  worker: 'apps/worker/src/main.ts',
  sim: 'apps/sim/src/main.ts',
  migrate: 'packages/db/src/migrate-cli.ts',
  doctor: 'scripts/doctor.ts',
  pair: 'scripts/pair.ts',
};

function readOutdir() {
  const at = process.argv.indexOf('--outdir');
  return at === -1 ? fileURLToPath(new URL('../dist/', import.meta.url)) : process.argv[at + 1];
}

async function main() {
  const outdir = readOutdir();
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
  const external = Object.keys(pkg.dependencies).flatMap((name) => [name, `${name}/*`]);
  await rm(outdir, { recursive: true, force: true });
  await mkdir(outdir, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints,
    outdir,
    bundle: true,
    // Dynamic imports stay lazy (the calculator loads mathjs only when first used), as they are from source.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    external,
    metafile: true,
    logLevel: 'warning',
    // CommonJS libraries inside an ESM bundle still call require() for Node's
    // own modules; give them one.
    banner: { js: "import { createRequire as __sbCreateRequire } from 'node:module'; const require = __sbCreateRequire(import.meta.url);" },
  });
  const outputs = Object.entries(result.metafile.outputs).filter(([file]) => file.endsWith('.js'));
  for (const [file, meta] of outputs) console.log(`${relative(root, resolve(root, file)).padEnd(20)} ${(meta.bytes / 1024).toFixed(0).padStart(6)} KiB`);
  await writeFile(join(outdir, 'build-info.json'), `${JSON.stringify({ builtAt: new Date().toISOString(), entries: Object.keys(entryPoints) }, null, 2)}\n`);
}

await main();
