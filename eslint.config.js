import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // test/fixtures/scripts, hostile, browser and playwright-suite are customers' check code, run by a runtime or engine, not project code;
  // test/fixtures/probe-threads are stand-in thread scripts, plain JavaScript a Worker loads as they are;
  // test/fixtures/crash is a process started from the built agent in dist/.
  {
    ignores: [
      'dist/',
      'node_modules/',
      'coverage/',
      'runtimes/*/node_modules/',
      'test/fixtures/scripts/',
      'test/fixtures/hostile/',
      'test/fixtures/browser/',
      'test/fixtures/playwright-suite/',
      'test/fixtures/probe-threads/',
      'test/fixtures/crash/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        // web/vite.config.ts belongs to no tsconfig: the dashboard's is for the browser, the root one for Node.
        projectService: { allowDefaultProject: ['web/vite.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      'no-console': 'off',
      // Fastify plugins and handlers are async by contract, awaiting or not.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests read JSON answers whose shape is what they assert on.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // The dashboard (web/) runs in the browser; its tsconfig is web/tsconfig.json.
    files: ['web/src/**/*.{ts,tsx}'],
    languageOptions: { globals: globals.browser },
  },
  {
    files: ['eslint.config.js'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
