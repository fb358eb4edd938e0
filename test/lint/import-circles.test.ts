import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { repoRoot } from '@switchboard/harness';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Issue 32: no import circle in product code. A circle makes a reader go round, and the order modules run in
// depends on which was imported first. Every app's and package's src/ (not tests), relative imports, type imports
// counted (TypeScript's own preProcessFile reads them).

function listProductFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : listProductFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function readLocalImports(file: string, known: Set<string>): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles.map((imported) => resolve(dirname(file), imported.fileName)).filter((path) => known.has(path));
}

/** Every circle, as the files of each strongly connected component of more than one file (Tarjan's algorithm). */
function findCircles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const imported of graph.get(file) ?? []) {
      if (!index.has(imported)) {
        visit(imported);
        low.set(file, Math.min(low.get(file) as number, low.get(imported) as number));
      } else if (onStack.has(imported)) low.set(file, Math.min(low.get(file) as number, index.get(imported) as number));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) circles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}

function productGraph(): Map<string, string[]> {
  const files = ['apps', 'packages'].flatMap((top) =>
    readdirSync(join(repoRoot, top)).flatMap((name) => {
      const src = join(repoRoot, top, name, 'src');
      return existsSync(src) ? listProductFiles(src) : [];
    }),
  );
  const known = new Set(files);
  return new Map(files.map((file) => [file, readLocalImports(file, known)]));
}

describe('product code imports', () => {
  it('form no circle', () => {
    const graph = productGraph();
    expect(graph.size).toBeGreaterThan(300);
    expect(findCircles(graph).map((circle) => circle.map((file) => relative(repoRoot, file)))).toEqual([]);
  });

  it('finds a circle when there is one', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(findCircles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});
