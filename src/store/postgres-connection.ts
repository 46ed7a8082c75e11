import pg from 'pg'
import { codeOf } from './errors.ts'

// An unreachable database must answer a request with a 503 in seconds, never hang it:
// connecting (or waiting for a pooled connection), then each statement, are bounded.
// The server cancels a statement first, which keeps the connection usable; the client's
// own timeout covers a server or network that no longer answers at all.
export const CONNECT_TIMEOUT_MS = 2000
const STATEMENT_TIMEOUT_MS = 3000
const QUERY_TIMEOUT_MS = 4000
// The probe that ends an outage runs again soon: it need not wait long.
const PROBE_TIMEOUT_MS = 1000

// Errors that say the database cannot be reached or cannot serve now, not that the
// request is wrong: network failures, and SQLSTATE classes 08 (connection), 53
// (insufficient resources), 57P01-57P03 (shutting down, starting up) and 57014
// (statement_timeout).
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0[1-3]$|57014$)/
// node-postgres's own timeouts and lost connections carry no code, only these messages.
// Two of them say less, and a statement's failure is tested for them first: a statement
// refused unsent (neverRan) runs again, and a wait for a pooled connection
// (poolExhausted) is a busy store, not a lost one.
const UNAVAILABLE_MESSAGE = /timeout|Connection terminated|not queryable/i
// Errors that say the service's connection settings do not work (now): class 28, the
// password or role refused (rotated on the server, say), and 3D000, no such database.
// No new connection can be opened, so the store is down until they work again; at start
// they are settings to fix, not an outage to wait out.
const SETTINGS_SQLSTATE = /^(28|3D000$)/
// Errors that say the database answers but takes no writes now: a full disk (53100), or
// a server that is read-only (25006: a standby after a failover, or
// default_transaction_read_only, which managed services set when their storage runs out).
const NO_WRITES_SQLSTATE = /^(53100|25006)$/
// A statement the server cancelled, at statement_timeout (or an administrator did): it
// answers, but the statement could not finish in time. A write so cancelled most often
// waited on a lock that reads do not need (the SHARE lock of a CREATE INDEX).
const CANCELLED_SQLSTATE = '57014'
// A running statement whose connection the server ended (57P01): pg_terminate_backend
// on that one session, or a shutdown, which the next connection tells apart.
const ENDED_SQLSTATE = '57P01'
// The server ended an idle session (idle_session_timeout) as a statement was on its way
// to it: the session was ended before it read the statement, which never ran.
const IDLE_ENDED_SQLSTATE = '57P05'
// node-postgres refuses a statement, without sending it, on a connection that has already
// failed or is closing: the pool can hand one out in the moment between the server ending
// it and the pool hearing of it.
const NOT_SENT_MESSAGE = /^Client (has encountered a connection error|was closed) and is not queryable$/
// pg-pool's answer to a request that waited CONNECT_TIMEOUT_MS in its queue for one of
// the pool's connections, every one of them in use: the server answers, the instance has
// more statements in flight than connections to run them (its own new connections that
// time out say "Connection terminated due to connection timeout").
const POOL_WAIT_MESSAGE = 'timeout exceeded when trying to connect'
// Errors that roll a statement back for a concurrent one's sake, class 40: a
// serialization failure (on a server whose default isolation is stricter than the READ
// COMMITTED the statements are written for) or a deadlock. The statement can run again.
const ROLLED_BACK_SQLSTATE = /^40/
// Errors that refuse the data itself: SQLSTATE classes 22 (data exception), 23 (integrity
// constraint violation) and 54 (program limit exceeded, such as an index entry too large).
const REFUSED_SQLSTATE = /^(22|23|54)/

/** The pool's settings: every wait bounded. */
export function poolConfig (url: string, poolSize: number): pg.PoolConfig {
  return {
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    application_name: 'plant-store'
  }
}

/** True when the error says the database cannot serve now (a 503), not that the request is wrong. */
export function unavailable (err: unknown): boolean {
  const code = codeOf(err)
  if (code !== '') return NETWORK_ERRORS.has(code) || UNAVAILABLE_SQLSTATE.test(code)
  const { message } = err as { message?: unknown }
  return typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)
}

/** True when the database refuses the service's connection settings: the password, the role, the database's name. */
export function settingsRefused (err: unknown): boolean {
  return SETTINGS_SQLSTATE.test(codeOf(err))
}

/**
 * True when the database answers but takes no writes now: a 503 for writes, while reads
 * go on. `statement` failed with `err`; the store's reads are those that begin with
 * SELECT, and a read cancelled too is an outage (`unavailable`).
 */
export function takesNoWrites (err: unknown, statement: string): boolean {
  const code = codeOf(err)
  return NO_WRITES_SQLSTATE.test(code) || (code === CANCELLED_SQLSTATE && !statement.startsWith('SELECT'))
}

/** True when the server ended the connection of the statement that failed: that connection is gone, not the server. */
export function connectionEnded (err: unknown): boolean {
  return codeOf(err) === ENDED_SQLSTATE
}

/** True when the server has no slot for another connection: max_connections, or a role's or database's CONNECTION LIMIT. */
export function noConnectionSlot (err: unknown): boolean {
  return codeOf(err) === '53300'
}

/**
 * True when the statement never ran because its connection was gone before it was read:
 * the server ended it for being idle, or node-postgres knew it broken and did not send
 * it. It can run again, on another connection.
 */
export function neverRan (err: unknown): boolean {
  if (codeOf(err) === IDLE_ENDED_SQLSTATE) return true
  const { message } = err as { message?: unknown }
  return typeof message === 'string' && NOT_SENT_MESSAGE.test(message)
}

/**
 * True when the statement waited too long for one of the pool's connections, all busy:
 * a store too busy to serve it, not an outage. Connections held by a server that no
 * longer answers show that themselves, when their own statements time out.
 */
export function poolExhausted (err: unknown): boolean {
  return (err as { message?: unknown }).message === POOL_WAIT_MESSAGE
}

/** True when PostgreSQL rolled the statement back for a concurrent one's sake: it can run again. */
export function rolledBack (err: unknown): boolean {
  return ROLLED_BACK_SQLSTATE.test(codeOf(err))
}

/** True when PostgreSQL refused the data written (a 400 for that plant alone). */
export function refused (err: unknown): boolean {
  return REFUSED_SQLSTATE.test(codeOf(err))
}

/**
 * Runs `statement` on a connection of its own, on short timeouts: it must not wait
 * behind the pool's connections, which may all be stalled on the outage it checks.
 */
export async function probe (url: string, statement: string): Promise<void> {
  const client = new pg.Client({
    ...poolConfig(url, 1),
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
    statement_timeout: PROBE_TIMEOUT_MS,
    query_timeout: PROBE_TIMEOUT_MS
  })
  client.on('error', () => {}) // reported by the call that fails
  try {
    await client.connect()
    await client.query(statement)
  } finally {
    // Not awaited: a server that stopped answering may never acknowledge the goodbye.
    client.end().catch(() => {})
  }
}
