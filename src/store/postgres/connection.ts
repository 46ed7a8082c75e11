import pg from 'pg'
import { codeOf } from '../errors.ts'
import { timed } from './statement.ts'

// An unreachable database answers a 503 in seconds: connecting and each statement are
// bounded, the server's cancel first (the connection stays usable), the client's last.
export const CONNECT_TIMEOUT_MS = 2000
export const STATEMENT_TIMEOUT_MS = 3000
const QUERY_TIMEOUT_MS = 4000
// The probe that ends an outage runs again soon.
const PROBE_TIMEOUT_MS = 1000

// Cannot serve now: network failures, SQLSTATE 08 (connection), 53 (resources),
// 57P01-57P03 (shutting down, starting up), 57014 (statement_timeout).
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0[1-3]$|57014$)/
// node-postgres's timeouts and lost connections carry no code, only a message; callers
// test neverRan and poolExhausted first, as those say more.
const UNAVAILABLE_MESSAGE = /timeout|Connection terminated|not queryable/i
// Password or role refused (28) or no such database (3D000): no new connection opens.
const SETTINGS_SQLSTATE = /^(28|3D000$)/
// A pooler (PgBouncer) answers 08P01 to whatever it refuses itself, a setting or an outage
// ("server login has been failing", "no more connections allowed"): its words tell which.
const POOLER_SETTINGS_MESSAGE = /unsupported startup parameter|authentication failed|does not exist|no such (database|user)/
// PgBouncer's words when its max_client_conn is reached.
const POOLER_NO_SLOT_MESSAGE = /^no more connections allowed/
/** What to look at when settingsRefused: they never pass by themselves. */
export const SETTINGS_TO_CHECK = 'check the user, password, database name and parameters of DATABASE_URL, and the settings of a pooler in front of PostgreSQL'
// Answers but takes no writes: disk full (53100) or read-only (25006: a standby, or
// default_transaction_read_only as managed services set when storage runs out).
const NO_WRITES_SQLSTATE = /^(53100|25006)$/
// Cancelled at statement_timeout; a write so cancelled most often waited on a lock reads skip.
const CANCELLED_SQLSTATE = '57014'
// This session was ended (pg_terminate_backend, or a shutdown the next connection reveals).
const ENDED_SQLSTATE = '57P01'
// idle_session_timeout ended the session before it read the statement: it never ran.
const IDLE_ENDED_SQLSTATE = '57P05'
// node-postgres refuses, unsent, a statement on a connection already failed or closing.
const NOT_SENT_MESSAGE = /^Client (has encountered a connection error|was closed) and is not queryable$/
// pg-pool's answer after CONNECT_TIMEOUT_MS queued for a busy pool (a new connection
// that times out says "Connection terminated due to connection timeout" instead).
const POOL_WAIT_MESSAGE = 'timeout exceeded when trying to connect'
// Class 40: serialization failure or deadlock; the statement can run again.
const ROLLED_BACK_SQLSTATE = /^40/
// The data itself refused: 22 (data exception), 23 (constraint), 54 (program limit).
const REFUSED_SQLSTATE = /^(22|23|54)/

/**
 * The pool's settings: every wait bounded. Its only startup parameter is application_name,
 * which poolers take, unless `sessionTimeout` (see PoolOptions) sets the statement timeout too.
 */
export function poolConfig (url: string, poolSize: number, sessionTimeout = false): pg.PoolConfig {
  return {
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    application_name: 'plant-store',
    ...sessionTimeout ? { statement_timeout: STATEMENT_TIMEOUT_MS } : {}
  }
}

/** True when the error says the database cannot serve now (a 503), not that the request is wrong. */
export function unavailable (err: unknown): boolean {
  const code = codeOf(err)
  if (code !== '') return NETWORK_ERRORS.has(code) || UNAVAILABLE_SQLSTATE.test(code)
  return UNAVAILABLE_MESSAGE.test(messageOf(err))
}

/** True when the database, or a pooler in front of it, refuses the service's connection settings: the password, the role, the database's name, a parameter. */
export function settingsRefused (err: unknown): boolean {
  const code = codeOf(err)
  if (code === '08P01') return POOLER_SETTINGS_MESSAGE.test(messageOf(err))
  return SETTINGS_SQLSTATE.test(code)
}

/** True when the database takes no writes now (reads go on); a cancelled SELECT is an outage instead. */
export function takesNoWrites (err: unknown, statement: string): boolean {
  const code = codeOf(err)
  return NO_WRITES_SQLSTATE.test(code) || (code === CANCELLED_SQLSTATE && !statement.startsWith('SELECT'))
}

/** True when the server ended the connection of the statement that failed: that connection is gone, not the server. */
export function connectionEnded (err: unknown): boolean {
  return codeOf(err) === ENDED_SQLSTATE
}

/** True when the server has no slot for another connection: max_connections, a role's or database's CONNECTION LIMIT, or a pooler's max_client_conn. */
export function noConnectionSlot (err: unknown): boolean {
  const code = codeOf(err)
  return code === '53300' || (code === '08P01' && POOLER_NO_SLOT_MESSAGE.test(messageOf(err)))
}

/** True when the statement never reached a live session: it can run again on another connection. */
export function neverRan (err: unknown): boolean {
  return codeOf(err) === IDLE_ENDED_SQLSTATE || NOT_SENT_MESSAGE.test(messageOf(err))
}

/** True when the statement waited too long for a busy pool: a busy store, not an outage. */
export function poolExhausted (err: unknown): boolean {
  return messageOf(err) === POOL_WAIT_MESSAGE
}

/** A driver error's message; empty when it has none. */
function messageOf (err: unknown): string {
  const { message } = err as { message?: unknown }
  return typeof message === 'string' ? message : ''
}

/** True when PostgreSQL rolled the statement back for a concurrent one's sake: it can run again. */
export function rolledBack (err: unknown): boolean {
  return ROLLED_BACK_SQLSTATE.test(codeOf(err))
}

/** True when PostgreSQL refused the data written (a 400 for that plant alone). */
export function refused (err: unknown): boolean {
  return REFUSED_SQLSTATE.test(codeOf(err))
}

/** Runs `statement` on its own short-timeout connection: the pool's may all be stalled on the outage. */
export async function probe (url: string, statement: string): Promise<void> {
  const client = new pg.Client({
    ...poolConfig(url, 1),
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
    query_timeout: PROBE_TIMEOUT_MS
  })
  client.on('error', () => {}) // reported by the call that fails
  try {
    await client.connect()
    await client.query(timed(statement, PROBE_TIMEOUT_MS))
  } finally {
    // Not awaited: a server that stopped answering may never acknowledge the goodbye.
    client.end().catch(() => {})
  }
}
