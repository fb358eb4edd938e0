import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// SQL only through parameterised queries: postgres's and drizzle's tagged
// templates send every interpolated value as a parameter. This is the way to
// splice text into execute() instead, so it is refused outright. (Kept in a
// constant: a block below that sets no-restricted-syntax again replaces the
// whole list, so it repeats this.)
const sqlSyntax = [
  {
    selector: "CallExpression[callee.property.name='execute'][arguments.0.type=/^(Literal|TemplateLiteral|BinaryExpression)$/]",
    message: 'execute() takes a sql`` tagged template, never a string.',
  },
];

// The other ways to build SQL from strings (see sqlSyntax), kept in a
// constant for the same reason.
const sqlProperties = [
  { property: 'unsafe', message: 'SQL is built only with tagged templates (parameters), never from strings.' },
  { object: 'sql', property: 'raw', message: 'SQL is built only with tagged templates (parameters), never from strings.' },
];

// One database handle (packages/db/README.md): everything outside packages/db
// passes `db` to query functions; the postgres.js client under it is
// packages/db's, for its prepared hot statements. Tests and the load tools
// may read rows through it, as they may write SQL.
const dbClientHomes = ['packages/db/**', 'test/**', '**/*.test.ts', 'apps/loadtest/**'];
const dbClientProperty = {
  property: '$client',
  message: 'Pass `db` to a query function in packages/db; `db.$client` is used only there (packages/db/README.md).',
};

// Boundaries (README, "Boundaries"). Each is a regex over the import
// specifier, enforced for static imports and re-exports (no-restricted-imports)
// and for import() (no-restricted-syntax). Every folder in apps/ is an app.
const appNames = readdirSync(new URL('./apps/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const appImports = {
  regex: `^(@switchboard/(${appNames.join('|')})(/|$)|(\\.\\./)+apps/)`,
  message: 'A package never imports an app: move what both need into a package.',
};
const scriptImports = {
  regex: '^(\\.\\./)+scripts/',
  message: 'apps/loadtest never imports scripts/: what both need lives in a package (@switchboard/harness).',
};
const ioImports = {
  regex:
    '^((node:)?(fs|net|http|https|http2|child_process|dgram|dns|tls|cluster|worker_threads|module|readline|inspector)(/|$)' +
    '|(postgres|ioredis|bullmq|drizzle-orm|undici|fastify|openai|ws|grammy|pino|prom-client)(/|$)|@(fastify|slack|discordjs|bull-board)/)',
  message: 'packages/core does no I/O: the caller does it and passes values in.',
};
const vendorImports = {
  regex: '^openai(/|$)',
  message: 'The OpenAI SDK is used only in packages/agent/src/openai/ (packages/agent/README.md, "The runtime interface").',
};
const vendorSdkHomes = ['packages/agent/src/openai/**', 'apps/sim/**'];
const workspaceImports = {
  regex: '^@switchboard/',
  message: 'packages/core imports no other Switchboard package: it is what they all build on.',
};

/** no-restricted-imports and no-restricted-syntax refusing `boundaries` both as imports and as import(). */
function refuseImports(boundaries, extraSyntax = []) {
  // esquery ends a regex at the first slash, so slashes are written as \x2F.
  const dynamic = boundaries.map(({ regex, message }) => ({
    selector: `ImportExpression[source.value=/${regex.replaceAll('/', '\\x2F')}/]`,
    message,
  }));
  return {
    'no-restricted-imports': ['error', { patterns: boundaries }],
    'no-restricted-syntax': ['error', ...sqlSyntax, ...dynamic, ...extraSyntax],
  };
}

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', 'dist/', 'migrations/', 'coverage/', 'test-results/', 'apps/*/public/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
      'no-restricted-properties': ['error', ...sqlProperties],
      'no-restricted-syntax': ['error', ...sqlSyntax],
    },
  },
  { files: ['**/*.ts'], ignores: dbClientHomes, rules: { 'no-restricted-properties': ['error', ...sqlProperties, dbClientProperty] } },
  // No model vendor's type outside its runtime (issue 20): the worker and the
  // tools speak packages/agent's runtime interface. The simulator's tests use
  // the SDK as a client, to check the simulated model speaks its wire format.
  // First, so the boundary blocks below (which set the same rule) repeat it.
  { files: ['**/*.ts'], ignores: [...vendorSdkHomes, 'packages/**', 'apps/loadtest/**'], rules: refuseImports([vendorImports]) },
  { files: ['packages/**'], ignores: vendorSdkHomes, rules: refuseImports([appImports, vendorImports]) },
  { files: vendorSdkHomes.filter((home) => home.startsWith('packages/')), rules: refuseImports([appImports]) },
  {
    files: ['packages/core/**'],
    // Only static imports, so the rule above sees everything core loads.
    rules: refuseImports([appImports, ioImports, workspaceImports], [
      { selector: 'ImportExpression', message: 'packages/core imports statically only, so its boundaries can be checked.' },
      { selector: "CallExpression[callee.name='require']", message: 'packages/core imports statically only, so its boundaries can be checked.' },
    ]),
  },
  { files: ['apps/loadtest/**'], rules: refuseImports([scriptImports, vendorImports]) },
  // The house limits (HOUSE-STYLE: functions under ~60 lines, at most four parameters; issue 32) over all product
  // code, apps and packages alike; tests and tools are not held to them. A function past 60 lines is a step that was
  // not split out; a fifth parameter is a record that was not named. Raise a limit for a file only with a comment why.
  {
    files: ['apps/*/src/**/*.ts', 'packages/*/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
      'max-params': ['error', 4],
    },
  },
);
