import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Issue 32: turn-store.ts and row-mappers.ts imported each other. A circle makes a reader go round, and the order
// modules run in depends on which was imported first; this keeps the package's product code free of them (type imports count).
const sourceRoot = dirname(fileURLToPath(import.meta.url));

function listProductFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return listProductFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

function readLocalImports(file: string, known: Set<string>): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles.map((imported) => resolve(dirname(file), imported.fileName)).filter((path) => known.has(path));
}

/** The first circle found by a depth-first walk, as the files in order, or [] if there is none. */
function findCircle(graph: Map<string, string[]>): string[] {
  const done = new Set<string>();
  const walk = (file: string, path: string[]): string[] => {
    const at = path.indexOf(file);
    if (at >= 0) return [...path.slice(at), file];
    if (done.has(file)) return [];
    for (const next of graph.get(file) ?? []) {
      const circle = walk(next, [...path, file]);
      if (circle.length > 0) return circle;
    }
    done.add(file);
    return [];
  };
  for (const file of graph.keys()) {
    const circle = walk(file, []);
    if (circle.length > 0) return circle;
  }
  return [];
}

describe('packages/db imports', () => {
  it('form no circle', () => {
    const files = listProductFiles(sourceRoot);
    const known = new Set(files);
    const graph = new Map(files.map((file) => [file, readLocalImports(file, known)]));
    expect(graph.size).toBeGreaterThan(40);
    expect(findCircle(graph).map((file) => relative(sourceRoot, file))).toEqual([]);
  });
});
