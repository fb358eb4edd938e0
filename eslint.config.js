import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

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
      // SQL only through parameterised queries: postgres's and drizzle's tagged
      // templates send every interpolated value as a parameter. These are the
      // ways to splice text into SQL instead, so they are refused outright.
      'no-restricted-properties': [
        'error',
        { property: 'unsafe', message: 'SQL is built only with tagged templates (parameters), never from strings.' },
        { object: 'sql', property: 'raw', message: 'SQL is built only with tagged templates (parameters), never from strings.' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='execute'][arguments.0.type=/^(Literal|TemplateLiteral|BinaryExpression)$/]",
          message: 'execute() takes a sql`` tagged template, never a string.',
        },
      ],
    },
  },
  {
    // No model vendor's type outside its runtime (issue 20): the worker and the
    // tools speak packages/agent's runtime interface. The simulator's tests use
    // the SDK as a client, to check the simulated model speaks its wire format.
    files: ['**/*.ts'],
    ignores: ['packages/agent/src/openai/**', 'apps/sim/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^openai(/|$)', message: 'The OpenAI SDK is used only in packages/agent/src/openai/ (packages/agent/README.md, "The runtime interface").' }] },
      ],
    },
  },
);
