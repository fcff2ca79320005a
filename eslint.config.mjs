// Type-aware lint. The layering rule keeps `vscode` out of everything but the host adapters and the
// composition root, so core stays usable from the CLI, tests and a future server.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const noVscode = {
  'no-restricted-imports': [
    'error',
    {
      paths: [{ name: 'vscode', message: 'Only src/host/ and src/extension.ts may import vscode.' }],
    },
  ],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test-artifacts/**', '*.mjs', 'bench/**/*.mjs', 'native/**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
      ...noVscode,
    },
  },
  {
    files: ['src/host/**/*.ts', 'src/extension.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    // The CLI, tests and benchmarks talk to a terminal.
    files: ['src/cli/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
