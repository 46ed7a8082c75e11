import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { monotonicMs } from '../monotonic-clock.ts'
import { StoreBusy, StoreUnavailable } from './errors.ts'
import { GroupCommit } from './group-commit.ts'
import { Outage } from './outage.ts'
import { CONNECT_TIMEOUT_MS, connectionEnded, neverRan, noConnectionSlot, poolConfig, poolExhausted, probe, refused, rolledBack, settingsRefused, takesNoWrites, unavailable } from './postgres-connection.ts'
import { createBatch, SELECT_PAGE_BY_TAG, SELECT_PLANTS, toPlant, utf8, type Row } from './postgres-plants.ts'
import { migrate, SCHEMA_VERSION } from './postgres-schema.ts'
import { PostgresWebhooks } from './postgres-webhooks.ts'
import { pageStart, plantBytes, type CreateResult, type ListQuery, type StoredPlant, type PlantStore, type StoreContext } from './store.ts'

const FIRST_RETRY_MS = 100
const MAX_RETRY_MS = 5000
// A statement rolled back for a concurrent one's sake (or refused a new connection) runs
// this many times at most; then its request answers 503, as a store too busy to serve it.
const STATEMENT_RUNS = 3
// Once the server has refused a new connection for lack of slots, the pool keeps to the
// connections it has for this long, then may grow again.
const KEEP_TO_OPEN_MS = 10_000
// A pool too busy to serve is logged at most once in this long: under a load it would
// be every request.
const POOL_EXHAUSTED_LOG_MS = 10_000
// What ends an outage: a read of the plants table (by its key, so as cheap at any size),
// not only an answer from the server. A table an administrator has locked (VACUUM FULL,
// ALTER TABLE, LOCK TABLE) times every statement out while the server answers SELECT 1;
// the store stays down until it is free.
const PROBE = 'SELECT 1 FROM plants WHERE id = 0'

/**
 * Plants in PostgreSQL, shared by every instance of the service pointed at the same
 * database. A create is acknowledged only after the statement holding it has committed;
 * creates that arrive together share one statement and one commit.
 *
 * The store opens whether or not the database answers, so that the service can listen
 * and report itself not ready: until it has connected and migrated, retrying in the
 * background with exponential backoff, every operation answers 503. Once running, a
 * statement timed out or its connection lost puts the store down: every operation answers
 * 503 at once, without waiting on the database, until a probe finds it answering again.
 * A connection the server ended on its own (pg_terminate_backend) fails its statement alone.
 * A write the server refuses for now (read-only, a full disk, a lock held against
 * writes) has writes alone answer 503, until one succeeds.
 * A created plant's webhook deliveries are written by the statement that inserts it.
 */
export class PostgresStore implements PlantStore {
  readonly webhooks: PostgresWebhooks
  readonly #pool: pg.Pool
  readonly #poolSize: number
  /** The pool's connections that are open: its count includes those still connecting. */
  #connected = 0
  #regrow: NodeJS.Timeout | undefined
  #poolExhaustedLoggedAt = -Infinity
  readonly #log: StoreContext['log']
  readonly #outage: Outage
  readonly #creates: GroupCommit<StoredPlant, CreateResult | Error>
  readonly #closing = new AbortController()
  readonly #started: Promise<void>
  #ready = false
  /** Why the store is not ready yet: the last failed start attempt. */
  #startError: unknown

  /** Resolves once the first attempt to connect and migrate has ended, whether it succeeded or not. */
  static async open (url: string, poolSize: number, context: StoreContext): Promise<PostgresStore> {
    let firstAttempt!: () => void
    const attempted = new Promise<void>((resolve) => { firstAttempt = resolve })
    const store = new PostgresStore(url, poolSize, context, firstAttempt)
    await attempted
    return store
  }

  private constructor (url: string, poolSize: number, { log, maxBatch, maxQueueBytes, onBatch }: StoreContext, firstAttempt: () => void) {
    this.#log = log
    this.#pool = new pg.Pool(poolConfig(url, poolSize))
    this.#poolSize = poolSize
    this.#outage = new Outage(log, 'PostgreSQL', async () => await probe(url, PROBE))
    // A connection the server or network closes emits an error, whether it is idle or
    // checked out with no statement running: PostgreSQL's fast shutdown sends its FATAL
    // right behind a statement's answer, before the connection is released. Unheard, the
    // error would end the process. The pool replaces the connection. Only a statement
    // that fails (one running on that connection, or the next) puts the store down: one
    // connection closed says nothing of the others (idle_session_timeout,
    // pg_terminate_backend, a proxy's idle limit).
    const closed = (err: Error): void => {
      this.#log.info({ err }, 'a PostgreSQL connection was closed; the pool opens another when needed')
    }
    this.#pool.on('connect', (client) => {
      this.#connected++
      client.on('error', closed)
    })
    // The pool repeats an idle connection's error, which the connection's listener has heard.
    this.#pool.on('error', () => {})
    this.#pool.on('remove', () => { this.#connected-- })
    const query = this.#query.bind(this)
    this.webhooks = new PostgresWebhooks(query)
    this.#creates = new GroupCommit({
      write: async (plants) => {
        const results = await createBatch(query, plants)
        this.#outage.recover(true)
        if (results.some((result) => !(result instanceof Error) && result.outcome === 'created')) this.webhooks.committed()
        return results
      },
      sizeOf: plantBytes,
      maxBatch,
      maxQueueBytes,
      onBatch
    })
    this.#started = this.#start(firstAttempt)
  }

  async create (plant: StoredPlant): Promise<CreateResult> {
    this.#available()
    const result = await this.#creates.submit(plant)
    if (result instanceof Error) throw result // refused after its batch had committed: see createBatch
    return result
  }

  async get (id: bigint): Promise<StoredPlant | undefined> {
    const [row] = (await this.#query<Row>(`${SELECT_PLANTS} WHERE id = $1`, [String(id)])).rows
    return row === undefined ? undefined : toPlant(row)
  }

  async list ({ limit, after, tag }: ListQuery): Promise<StoredPlant[]> {
    const from = pageStart(after)
    if (from === undefined) return []
    const { rows } = tag === undefined
      ? await this.#query<Row>(`${SELECT_PLANTS} WHERE id >= $1 ORDER BY id LIMIT $2`, [String(from), limit])
      : await this.#query<Row>(SELECT_PAGE_BY_TAG, [utf8(tag), String(from), limit])
    return rows.map(toPlant)
  }

  // A single statement: it commits on its own, and holding one row lock at a time it
  // cannot deadlock with another instance's batch.
  async delete (id: bigint): Promise<boolean> {
    const { rowCount } = await this.#query('DELETE FROM plants WHERE id = $1', [String(id)])
    this.#outage.recover(true)
    return rowCount === 1
  }

  async ping (): Promise<void> {
    await this.#query('SELECT 1')
  }

  async close (): Promise<void> {
    this.#closing.abort()
    await this.#started
    await this.#creates.drain()
    await this.#outage.close()
    clearTimeout(this.#regrow)
    await this.#pool.end()
  }

  /**
   * Connects and migrates until it succeeds or the store is closed. Every failed
   * attempt is logged with its cause and the wait before the next, doubling up to
   * MAX_RETRY_MS.
   */
  async #start (firstAttempt: () => void): Promise<void> {
    for (let attempt = 1, delay = FIRST_RETRY_MS; ; attempt++, delay = Math.min(2 * delay, MAX_RETRY_MS)) {
      try {
        await migrate(this.#pool)
        this.#ready = true
        this.#log.info({ attempt, schemaVersion: SCHEMA_VERSION }, 'the PostgreSQL store is available: connected and migrated')
        return
      } catch (err) {
        this.#startError = err
        if (this.#closing.signal.aborted) return
        // Anything but an unreachable database is a setting or schema to fix: louder.
        this.#log[unavailable(err) ? 'warn' : 'error']({ err, attempt, retryInMs: delay },
          'the PostgreSQL store cannot start yet; answering 503 and retrying')
      } finally {
        firstAttempt() // later calls change nothing
      }
      try {
        await sleep(delay, undefined, { signal: this.#closing.signal })
      } catch {
        return // closed while waiting
      }
    }
  }

  /** Throws StoreUnavailable until the store has started, and while it is down. */
  #available (): void {
    if (!this.#ready) throw new StoreUnavailable({ cause: this.#startError })
    this.#outage.check()
  }

  /**
   * Runs a statement once the store is ready and up. An unreachable database puts the
   * store down and throws StoreUnavailable; any other error is the statement's own.
   * Every statement is a transaction of its own, so one rolled back for a concurrent
   * one's sake runs again.
   */
  async #query<R extends pg.QueryResultRow = pg.QueryResultRow> (text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    let goneConnections = 0
    for (let run = 1; ; run++) {
      this.#available()
      let client: pg.PoolClient | undefined
      try {
        client = await this.#pool.connect()
        // The wait for a connection may have outlasted the start of an outage: a statement
        // would add its own timeout to that wait.
        this.#available()
        const result = await client.query<R>({ name: statementName(text), text, values })
        client.release()
        return result
      } catch (err) {
        // A refused plant or a rolled-back statement leaves the connection as it was, and a
        // client sending such plants must not make the store reconnect; after any other
        // error it may be what broke (a connection to a server that has become a standby:
        // a new one may reach the primary).
        const concurrent = rolledBack(err)
        client?.release(refused(err) || concurrent ? undefined : err as Error)
        // A statement sent as the server ended its idle connection, or handed a connection
        // already broken, never ran: it runs again, on another connection
        // (test/postgres-outage.test.ts met both, as a 500 and as an outage). The pool's
        // other idle connections may be ending too; each such run removes one, so it is
        // not counted, up to one run a connection the pool may hold: it opens a new
        // connection once they are gone.
        const notRun = neverRan(err)
        if (notRun && goneConnections++ < this.#poolSize) {
          run--
          continue
        }
        if (concurrent || notRun || (noConnectionSlot(err) && this.#keepToOpenConnections(err))) {
          if (run < STATEMENT_RUNS) continue
          this.#log.warn({ err, runs: run }, 'a statement did not complete in any of its runs; answering 503')
          throw new StoreUnavailable({ cause: err })
        }
        if (connectionEnded(err)) {
          // As with an idle connection ended, the others say nothing of it; a shutdown
          // puts the store down at the next statement, which cannot connect.
          this.#log.warn({ err }, 'a PostgreSQL connection was closed while a statement ran on it; answering 503 to that statement alone')
          throw new StoreUnavailable({ cause: err })
        }
        if (poolExhausted(err)) {
          this.#logPoolExhausted(err)
          throw new StoreBusy({ cause: err })
        }
        if (takesNoWrites(err, text)) throw this.#outage.fail(err, true)
        throw unavailable(err) || settingsRefused(err) ? this.#outage.fail(err) : err
      }
    }
  }

  /** A statement waited too long for a connection: the pool is too small for the load, or its statements too slow. */
  #logPoolExhausted (err: unknown): void {
    const now = monotonicMs()
    if (now - this.#poolExhaustedLoggedAt < POOL_EXHAUSTED_LOG_MS) return
    this.#poolExhaustedLoggedAt = now
    this.#log.warn({ err, poolSize: this.#poolSize },
      `every PostgreSQL connection of the pool stayed in use for ${CONNECT_TIMEOUT_MS} ms; what waited for one is refused as busy (is DATABASE_POOL_SIZE too small, or a statement slow?)`)
  }

  /**
   * The server has no slot for another connection (its max_connections reached, by other
   * clients or by DATABASE_POOL_SIZE × instances): the pool keeps to the connections it
   * has, which serve every request in turn, rather than the store going down. False when
   * it has none, which is an outage. pg-pool reads `options.max` each time it decides
   * whether to open another connection (`test/postgres.test.ts` holds it to that).
   */
  #keepToOpenConnections (err: unknown): boolean {
    const open = this.#connected
    if (open === 0) return false
    if (this.#regrow === undefined) {
      this.#log.warn({ err, poolSize: this.#poolSize, forMs: KEEP_TO_OPEN_MS },
        'PostgreSQL has no slot for another connection; the pool keeps to those open (is DATABASE_POOL_SIZE × instances above its max_connections?)')
    }
    this.#pool.options.max = open
    clearTimeout(this.#regrow)
    this.#regrow = setTimeout(() => {
      this.#regrow = undefined
      this.#pool.options.max = this.#poolSize
    }, KEEP_TO_OPEN_MS).unref()
    return true
  }
}

// Every statement is named: PostgreSQL parses and plans it once per connection, then
// only binds and runs it (the batch insert's CTE was parsed and planned at every batch).
// The texts are constants, so the names are few and never reused for another text.
const statementNames = new Map<string, string>()
function statementName (text: string): string {
  let name = statementNames.get(text)
  if (name === undefined) {
    name = `plant_store_${statementNames.size}`
    statementNames.set(text, name)
  }
  return name
}
