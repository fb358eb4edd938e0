import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@switchboard/harness';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The project's lint rules refuse every way of building SQL from strings;
// this proves they bite, so a changed config cannot quietly drop them.
async function lintSnippet(code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: repoRoot });
  const [result] = await eslint.lintText(code, { filePath: `${repoRoot}/packages/db/src/queries/lint-probe.ts` });
  return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

describe('SQL only through parameterised queries', () => {
  it.each([
    ['postgres unsafe()', 'export const q = (sql: { unsafe(s: string): unknown }, id: string) => sql.unsafe("select * from t where id = " + id);\n', 'no-restricted-properties'],
    ["drizzle's sql.raw()", 'declare const sql: { raw(s: string): unknown };\nexport const q = (id: string) => sql.raw(`select ${id}`);\n', 'no-restricted-properties'],
    ['execute() with a string', 'declare const db: { execute(s: unknown): unknown };\nexport const q = (id: string) => db.execute("select " + id);\n', 'no-restricted-syntax'],
    ['execute() with a template literal', 'declare const db: { execute(s: unknown): unknown };\nexport const q = (id: string) => db.execute(`select ${id}`);\n', 'no-restricted-syntax'],
  ])('refuses %s', async (_name, code, rule) => {
    expect(await lintSnippet(code)).toContain(rule);
  });

  it('accepts a tagged template', async () => {
    const code = 'declare const db: { execute(s: unknown): unknown };\ndeclare function sql(s: TemplateStringsArray, ...v: unknown[]): unknown;\nexport const q = (id: string) => db.execute(sql`select * from t where id = ${id}`);\n';
    expect(await lintSnippet(code)).toEqual([]);
  });
});

// The processes and the libraries they use call query functions; only
// packages/db writes SQL. Not checked: packages/db itself, packages/harness
// and apps/loadtest (tools that create databases and read rows to check them,
// as test/ does), and tests.
const sqlOwners = new Set(['packages/db', 'packages/harness', 'apps/loadtest']);
const sqlStart = /^\s*(select|insert|update|delete|with|create|alter|drop|lock|truncate)\b/i;
const sqlClients = /^(postgres|drizzle-orm)(\/|$)/;

describe('SQL lives in packages/db', () => {
  it('finds SQL in a probe', () => {
    const probe = "import { sql } from 'drizzle-orm';\nexport const q = (db: any) => db`\n  select 1`;\n";
    expect(findSql('probe.ts', probe)).toEqual(["imports drizzle-orm", 'line 2: select 1']);
  });

  it('has no SQL and no SQL client anywhere else', () => {
    const found: string[] = [];
    for (const workspace of ['apps', 'packages'].flatMap((dir) => readdirSync(join(repoRoot, dir)).map((name) => `${dir}/${name}`))) {
      if (sqlOwners.has(workspace)) continue;
      for (const entry of readdirSync(join(repoRoot, workspace, 'src'), { recursive: true, withFileTypes: true })) {
        if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) continue;
        const path = join(entry.parentPath, entry.name).slice(repoRoot.length + 1);
        found.push(...findSql(path, readFileSync(join(repoRoot, path), 'utf8')).map((where) => `${path}: ${where}`));
      }
    }
    expect(found).toEqual([]);
  });
});

/** Tagged templates that read as SQL, and imports of a SQL client, in one file. */
function findSql(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (sqlClients.test(node.moduleSpecifier.text)) found.push(`imports ${node.moduleSpecifier.text}`);
    }
    if (ts.isTaggedTemplateExpression(node)) {
      const head = ts.isNoSubstitutionTemplateLiteral(node.template) ? node.template.text : node.template.head.text;
      if (sqlStart.test(head)) {
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        found.push(`line ${line}: ${head.trim().split('\n')[0]}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
