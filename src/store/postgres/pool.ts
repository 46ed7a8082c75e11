import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { monotonicMs } from '../../process/clock.ts'
import { StoreBusy, StoreUnavailable } from '../errors.ts'
import type { Outage } from '../outage.ts'
import { CONNECT_TIMEOUT_MS, STATEMENT_TIMEOUT_MS, connectionEnded, neverRan, noConnectionSlot, poolConfig, poolExhausted, refused, rolledBack, SETTINGS_TO_CHECK, settingsRefused, takesNoWrites, unavailable } from './connection.ts'
import { inline, timed } from './statement.ts'
import type { StoreContext } from '../store.ts'

// A statement rolled back for a concurrent one's sake (or refused a connection) runs this
// many times at most, then answers 503.
const STATEMENT_RUNS = 4
// Run again at once, a rolled-back statement meets the same transactions still in flight
// (tens of ms under load): it first waits a random time up to this, doubled per run (full
// jitter), at most 10 + 20 + 40 ms in all.
const RERUN_WAIT_MS = 10
// Once the server has refused a connection for lack of slots, the pool keeps to those it has this long.
const KEEP_TO_OPEN_MS = 10_000
// A pool too busy to serve is logged at most this often: under load it would be every request.
const POOL_EXHAUSTED_LOG_MS = 10_000

/**
 * The pool of connections and the one way statements run on it, each a transaction of
 * its own: what fails is sorted into an outage, a busy pool, a retry or the statement's own error.
 */
export class PostgresPool {
  readonly pool: pg.Pool
  readonly #size: number
  readonly #prepared: boolean
  readonly #log: StoreContext['log']
  readonly #outage: Outage
  /** Throws StoreUnavailable while the store cannot serve. */
  readonly #available: () => void
  /** The pool's open connections: its own count includes those still connecting. */
  #connected = 0
  #regrow: NodeJS.Timeout | undefined
  #exhaustedLoggedAt = -Infinity

  constructor ({ url, size, preparedStatements }: PoolOptions, log: StoreContext['log'], outage: Outage, available: () => void) {
    this.pool = new pg.Pool(poolConfig(url, size, preparedStatements))
    this.#size = size
    this.#prepared = preparedStatements
    this.#log = log
    this.#outage = outage
    this.#available = available
    // A connection closed by the server or network emits an error even when idle, which
    // unheard would end the process; one closed says nothing of the others.
    const closed = (err: Error): void => {
      this.#log.info({ err }, 'a PostgreSQL connection was closed; the pool opens another when needed')
    }
    this.pool.on('connect', (client) => {
      this.#connected++
      client.on('error', closed)
    })
    // The pool repeats an idle connection's error, which the connection's listener has heard.
    this.pool.on('error', () => {})
    this.pool.on('remove', () => { this.#connected-- })
  }

  /**
   * Runs a statement once the store is up. An unreachable database puts the store down
   * and throws StoreUnavailable; any other error is the statement's own.
   */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow> (text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    if (this.#prepared) return await this.#run(text, async (client) => await client.query<R>({ name: statementName(text), text, values }))
    const message = timed(inline(text, values), STATEMENT_TIMEOUT_MS)
    return await this.#run(text, async (client) => (await client.query(message) as unknown as Array<pg.QueryResult<R>>)[1])
  }

  /**
   * Runs statements sent together, their values written in, as one implicit transaction:
   * one round trip, and each statement sees what committed before it began; resolves with
   * each one's result.
   */
  async script (text: string): Promise<pg.QueryResult[]> {
    if (this.#prepared) return await this.#run(text, async (client) => [await client.query(text)].flat())
    const message = timed(text, STATEMENT_TIMEOUT_MS)
    return await this.#run(text, async (client) => (await client.query(message) as unknown as pg.QueryResult[]).slice(1))
  }

  /** Runs `work` on a connection of the pool; `text`, what it sends, sorts its errors. */
  async #run<Result> (text: string, work: (client: pg.PoolClient) => Promise<Result>): Promise<Result> {
    let goneConnections = 0
    for (let run = 1; ; run++) {
      this.#available()
      let client: pg.PoolClient | undefined
      try {
        client = await this.pool.connect()
        // The wait for a connection may have outlasted the start of an outage.
        this.#available()
        const result = await work(client)
        client.release()
        return result
      } catch (err) {
        // A refused plant or a rolled-back statement leaves the connection sound; after any
        // other error it may be what broke (a server turned standby), so it is dropped.
        const concurrent = rolledBack(err)
        client?.release(refused(err) || concurrent ? undefined : err as Error)
        // Sent on a connection the server had ended, it never ran: it runs again, uncounted,
        // up to one run per connection the pool may hold.
        const notRun = neverRan(err)
        if (notRun && goneConnections++ < this.#size) {
          run--
          continue
        }
        if (concurrent || notRun || (noConnectionSlot(err) && this.#keepToOpenConnections(err))) {
          if (run < STATEMENT_RUNS) {
            if (concurrent) await sleep(Math.random() * RERUN_WAIT_MS * 2 ** (run - 1))
            continue
          }
          this.#log.warn({ err, runs: run }, 'a statement did not complete in any of its runs; answering 503')
          throw new StoreUnavailable({ cause: err })
        }
        if (connectionEnded(err)) {
          // One connection ended says nothing of the others; a shutdown shows at the next connect.
          this.#log.warn({ err }, 'a PostgreSQL connection was closed while a statement ran on it; answering 503 to that statement alone')
          throw new StoreUnavailable({ cause: err })
        }
        if (poolExhausted(err)) {
          this.#logPoolExhausted(err)
          throw new StoreBusy({ cause: err })
        }
        if (takesNoWrites(err, text)) throw this.#outage.fail(err, true)
        if (settingsRefused(err)) {
          throw this.#outage.fail(err, false, `the PostgreSQL store is unavailable; its connection settings are refused, a configuration error (${SETTINGS_TO_CHECK}); answering 503 until they are taken`)
        }
        throw unavailable(err) ? this.#outage.fail(err) : err
      }
    }
  }

  async close (): Promise<void> {
    clearTimeout(this.#regrow)
    await this.pool.end()
  }

  #logPoolExhausted (err: unknown): void {
    const now = monotonicMs()
    if (now - this.#exhaustedLoggedAt < POOL_EXHAUSTED_LOG_MS) return
    this.#exhaustedLoggedAt = now
    this.#log.warn({ err, poolSize: this.#size },
      `every PostgreSQL connection of the pool stayed in use for ${CONNECT_TIMEOUT_MS} ms; what waited for one is refused as busy (is DATABASE_POOL_SIZE too small, or a statement slow?)`)
  }

  /**
   * The server has no slot for another connection: the pool keeps to those it has rather
   * than the store going down (false when it has none). pg-pool reads `options.max` at each decision.
   */
  #keepToOpenConnections (err: unknown): boolean {
    const open = this.#connected
    if (open === 0) return false
    if (this.#regrow === undefined) {
      this.#log.warn({ err, poolSize: this.#size, forMs: KEEP_TO_OPEN_MS },
        'PostgreSQL has no slot for another connection; the pool keeps to those open (is DATABASE_POOL_SIZE × instances above its max_connections, or above the max_client_conn of a pooler in front of it?)')
    }
    this.pool.options.max = open
    clearTimeout(this.#regrow)
    this.#regrow = setTimeout(() => {
      this.#regrow = undefined
      this.pool.options.max = this.#size
    }, KEEP_TO_OPEN_MS).unref()
    return true
  }
}

/** Runs statements sent together as one implicit transaction: see PostgresPool.script. */
export type Script = (text: string) => Promise<pg.QueryResult[]>

/** Runs one statement; an unreachable database is thrown as StoreUnavailable. */
export type Query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>

/**
 * `preparedStatements`: each statement prepared once per connection (named), the statement
 * timeout a setting of the session; only for connections of the service's own (no
 * transaction-mode pooler, which refuses the one and mixes up the other).
 */
export interface PoolOptions { url: string, size: number, preparedStatements: boolean }

// Named statements are parsed and planned once per connection; the texts are constants, so names are few.
const statementNames = new Map<string, string>()
function statementName (text: string): string {
  let name = statementNames.get(text)
  if (name === undefined) {
    name = `plant_store_${statementNames.size}`
    statementNames.set(text, name)
  }
  return name
}
