import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    // client/src/schema.ts is openapi-typescript's output (npm run client), checked by tsc and its drift test.
    ignores: ['dist/**', 'client/dist/**', '.tap/**', 'coverage/**', 'test-artifacts/**', 'client/src/schema.ts']
  }),
  {
    // A schema and its Static<> type share a name on purpose: `Plant` is both.
    files: ['schemas/**'],
    rules: { '@typescript-eslint/no-redeclare': 'off' }
  },
  {
    // SQLite prepares a statement again at every run when a bare parameter is its LIMIT
    // or equals the first column of an index that is not unique (tag, webhook_id): `+?`
    // is the same value without it (see the statements in src/store/sqlite/store.ts).
    files: ['src/store/sqlite/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...['Literal[value', 'TemplateElement[value.raw'].map((node) => ({
        selector: `${node}=/\\b(LIMIT|tag\\s*=|webhook_id\\s*=)\\s*[?@:$]/i]`,
        message: 'Write the parameter as +? (LIMIT +?, tag = +?): a bare one makes SQLite prepare the statement again at every run.'
      }))]
    }
  }
]
