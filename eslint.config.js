import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['bench/tmp/**', 'node_modules/', '.data/', '.scale/', '.scale-watch/', '.tap/', 'dist/', 'test/client/generated/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // Use cases take (deps, caller, input) and need no request: only the HTTP edge (and the JWT
    // plugin it registers) may import fastify. test/architecture/imports.test.ts checks the rest of the layout.
    files: ['src/**/*.ts'],
    ignores: ['src/http/**', 'src/identity/jwt.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['fastify', 'fastify-*', '@fastify/*'], message: 'Only src/http/ imports fastify: put this behind a use case in src/commands/<module>/ that takes (deps, caller, input).' }] }],
    },
  },
)
