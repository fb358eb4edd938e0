#!/usr/bin/env node
// Writes into package-lock.json the entries npm leaves out for other
// platforms' optional binaries (rollup's, msgpackr-extract's), so that
// `npm ci` accepts the lock file on every platform.
//
// Why this exists: the registry our machines reach serves only some versions
// of packages such as @rollup/rollup-darwin-arm64, so the npm that writes the
// lock file here cannot resolve them and leaves them out (npm/cli#9342); `npm
// ci` then calls the lock file out of sync, on this machine and everywhere
// else. npm offers no option for this, so the entry is written by hand:
//
//   - the version is the exact one the parent package pins (rollup and
//     msgpackr-extract pin their binaries exactly; anything else is refused);
//   - `os`, `cpu` and `libc` come from the registry: from that exact version
//     when it is served, else from the newest version that is (these
//     packages never change platform between versions);
//   - `resolved` and `integrity` are written only when the registry serves
//     that exact version. Otherwise they are left out, and npm fetches the
//     package by name and version from the user's own registry and records
//     its integrity then. This is the one place the lock file is weaker than
//     npm would write it, and only for binaries of a platform this machine
//     does not install.
//
// Run after every change of dependencies: `npm install && npm run lock:complete`.
// `node scripts/complete-lockfile.mjs --check` exits 1 when an entry is
// missing (CI runs it before `npm ci`). Plain Node, no dependencies: it must
// run before `npm ci` has installed anything.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const lockPath = fileURLToPath(new URL('../package-lock.json', import.meta.url));
const exactVersion = /^\d+\.\d+\.\d+(?:-[\w.]+)?$/;

/** Where npm would look for `name` required by the package at `parentPath`: nearest node_modules upward. */
function findResolvedPath(packages, parentPath, name) {
  let base = parentPath;
  for (;;) {
    const candidate = base === '' ? `node_modules/${name}` : `${base}/node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (base === '') return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

function listMissingOptionals(lock) {
  const missing = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
      if (findResolvedPath(lock.packages, path, name)) continue;
      missing.push({ parentPath: path, parent: entry, name, spec });
    }
  }
  return missing;
}

function viewRegistry(spec, fields) {
  try {
    const out = execFileSync('npm', ['view', spec, ...fields, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out.trim() === '' ? undefined : JSON.parse(out);
  } catch {
    return undefined;
  }
}

function describeFromRegistry(name, version) {
  const exact = viewRegistry(`${name}@${version}`, ['dist.integrity', 'dist.tarball', 'os', 'cpu', 'libc', 'license']);
  if (exact) return { exact: true, data: exact };
  const newest = viewRegistry(name, ['version', 'os', 'cpu', 'libc', 'license']);
  if (newest) return { exact: false, data: newest };
  throw new Error(`${name}: the registry serves no version at all, so its platform is unknown; add the entry by hand`);
}

function buildEntry(missing) {
  const { name, spec, parent } = missing;
  if (!exactVersion.test(spec)) throw new Error(`${name}@${spec}: not an exact version; refusing to guess`);
  const { exact, data } = describeFromRegistry(name, spec);
  const entry = { version: spec };
  if (exact && data['dist.tarball']) entry.resolved = data['dist.tarball'];
  if (exact && data['dist.integrity']) entry.integrity = data['dist.integrity'];
  for (const field of ['cpu', 'libc', 'os']) if (data[field]) entry[field] = [data[field]].flat();
  if (parent.dev) entry.dev = true;
  if (parent.devOptional) entry.devOptional = true;
  if (data.license) entry.license = data.license;
  entry.optional = true;
  return entry;
}

function placeEntry(lock, missing, entry) {
  const hoisted = `node_modules/${missing.name}`;
  const path = lock.packages[hoisted] ? `${missing.parentPath}/node_modules/${missing.name}` : hoisted;
  lock.packages[path] = entry;
  return path;
}

function sortPackages(lock) {
  const [root, ...rest] = Object.keys(lock.packages);
  const sorted = { [root]: lock.packages[root] };
  for (const key of rest.sort((a, b) => a.localeCompare(b, 'en'))) sorted[key] = lock.packages[key];
  lock.packages = sorted;
}

function main() {
  const check = process.argv.includes('--check');
  const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
  const missing = listMissingOptionals(lock);
  if (missing.length === 0) {
    console.log('package-lock.json: every optional platform package has an entry');
    return;
  }
  if (check) {
    for (const m of missing) console.error(`missing from package-lock.json: ${m.name}@${m.spec} (optional dependency of ${m.parentPath})`);
    console.error(`${missing.length} entries missing: run \`npm run lock:complete\` and commit package-lock.json`);
    process.exit(1);
  }
  for (const m of missing) {
    const path = placeEntry(lock, m, buildEntry(m));
    console.log(`added ${path}@${m.spec}`);
  }
  sortPackages(lock);
  writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`package-lock.json: ${missing.length} entries written`);
}

main();
