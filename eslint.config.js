import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', '.tap/**', 'coverage/**', 'test-artifacts/**']
  }),
  {
    // A schema and its Static<> type share a name on purpose: `Plant` is both.
    files: ['schemas/**'],
    rules: { '@typescript-eslint/no-redeclare': 'off' }
  }
]
