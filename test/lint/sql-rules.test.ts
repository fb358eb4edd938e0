import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '@switchboard/harness';

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
