#!/usr/bin/env node
// `npm run build`: bundles each process's entry point into dist/ with esbuild
// (source maps on), so production runs plain `node` without tsx or dev
// packages. Our workspace code and the pure-JavaScript libraries listed as
// devDependencies (openai, drizzle-orm, zod…) are carried inside the bundle; what package.json lists as `dependencies`
// stays external and is loaded from node_modules at run time: those are the
// packages that read their own files (bull-board's UI, swagger-ui's assets,
// mathjs for the calculator thread, pino's worker transports) or ship native
// code, which a bundle would break. The worker's token counter reads
// o200k's ranks from a data file on its first count (packages/agent's
// o200k-counter.ts); the build copies that file from gpt-tokenizer into dist/.
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
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
    // Stack traces need only the mappings. With the sources' text in the map,
    // Node's source-map support held every bundled file's source on the heap
    // (3.3 MiB for the old tokenizer's tables alone).
    sourcesContent: false,
    external,
    metafile: true,
    logLevel: 'warning',
    // CommonJS libraries inside an ESM bundle still call require() for Node's
    // own modules; give them one.
    banner: { js: "import { createRequire as __sbCreateRequire } from 'node:module'; const require = __sbCreateRequire(import.meta.url);" },
  });
  const outputs = Object.entries(result.metafile.outputs).filter(([file]) => file.endsWith('.js'));
  for (const [file, meta] of outputs) console.log(`${relative(root, resolve(root, file)).padEnd(20)} ${(meta.bytes / 1024).toFixed(0).padStart(6)} KiB`);
  const ranksFile = 'o200k_base.tiktoken';
  await copyFile(createRequire(import.meta.url).resolve(`gpt-tokenizer/data/${ranksFile}`), join(outdir, ranksFile));
  await writeFile(join(outdir, 'build-info.json'), `${JSON.stringify({ builtAt: new Date().toISOString(), entries: Object.keys(entryPoints) }, null, 2)}\n`);
}

await main();
