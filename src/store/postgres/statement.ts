import { createRequire } from 'node:module'

// How the PostgreSQL store sends a statement: one simple-protocol message that first sets
// the statement timeout for its own transaction (SET LOCAL), then runs the statement with
// its values written in. The statements of one message are one implicit transaction, and
// PostgreSQL 13 and later times each of them on its own. Nothing outlives the transaction
// (no session setting, no prepared statement), so a transaction-mode pooler may hand each
// one to any server connection; and it stays one round trip.

// node-postgres' own text for a parameter (not in its typings): an array becomes an array
// literal, a Date a timestamp. Quoted, it is the text the parameter would have carried,
// typed by its context as an untyped parameter is.
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (value: unknown) => unknown }

// A quoted literal of the statement's own (skipped: a `$1` in it is text), or a parameter.
const PARAMETER = /'(?:[^']|'')*'|\$(\d+)/g

/** `statements` run in one transaction whose statements each stop after `timeoutMs` on the server; its first result is the SET's. */
export function timed (statements: string, timeoutMs: number): string {
  return `SET LOCAL statement_timeout = ${Math.trunc(timeoutMs)}; ${statements}`
}

/** `text` with each `$n` replaced by the literal of values[n - 1]. */
export function inline (text: string, values: unknown[] = []): string {
  return text.replace(PARAMETER, (match, n: string | undefined) => {
    if (n === undefined) return match
    if (Number(n) < 1 || Number(n) > values.length) throw new Error(`no value for $${n}`)
    return literal(values[Number(n) - 1])
  })
}

/**
 * The SQL literal of a value: an escape string, whatever standard_conforming_strings says,
 * its quotes and backslashes doubled (pg.escapeLiteral does so a character at a time, slow
 * for a batch's arrays); a Buffer is bytea, in hex.
 */
export function literal (value: unknown): string {
  const text = prepareValue(value)
  if (text === null) return 'NULL'
  if (Buffer.isBuffer(text)) return `E'\\\\x${text.toString('hex')}'::bytea`
  return `E'${String(text).replaceAll('\\', '\\\\').replaceAll("'", "''")}'`
}
