import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { INT64_MAX, INT64_MIN } from '../../schemas/index.js'
import { StoreUnavailable } from './errors.js'
import { GroupCommit } from './group-commit.js'
import { migrate, SCHEMA_VERSION } from './postgres-schema.js'
import { samePlant, type CreateResult, type ListQuery, type PlantRecord, type PlantStore, type StoreContext } from './store.js'

// An unreachable database must answer a request with a 503 in seconds, never hang it:
// connecting (or waiting for a pooled connection), then each statement, are bounded.
// The server cancels a statement first, which keeps the connection usable; the client's
// own timeout covers a server or network that no longer answers at all.
const CONNECT_TIMEOUT_MS = 2000
const STATEMENT_TIMEOUT_MS = 3000
const QUERY_TIMEOUT_MS = 4000
const FIRST_RETRY_MS = 100
const MAX_RETRY_MS = 5000

// Errors that say the database cannot be reached or cannot serve now, not that the
// request is wrong: network failures, and SQLSTATE classes 08 (connection), 53
// (insufficient resources), 57P01-57P03 (shutting down, starting up) and 57014
// (statement_timeout).
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0[1-3]$|57014$)/
// node-postgres's own timeouts and lost connections carry no code, only these messages.
const UNAVAILABLE_MESSAGE = /timeout|Connection terminated|not queryable/i

/** A row as node-postgres returns it: int8 as a string, bytea as a Buffer. */
interface Row { id: string, name: Buffer, tag: Buffer | null }

const SELECT_PLANTS = 'SELECT id, name, tag FROM plants'

/**
 * Plants in PostgreSQL, shared by every instance of the service pointed at the same
 * database. A create is acknowledged only after the statement holding it has committed;
 * creates that arrive together share one statement and one commit.
 *
 * The store opens whether or not the database answers, so that the service can listen
 * and report itself not ready: until it has connected and migrated, retrying in the
 * background with exponential backoff, every operation answers 503.
 */
export class PostgresStore implements PlantStore {
  readonly #pool: pg.Pool
  readonly #log: StoreContext['log']
  readonly #creates: GroupCommit<PlantRecord, CreateResult>
  readonly #closing = new AbortController()
  readonly #started: Promise<void>
  #ready = false
  /** Why the store is not ready yet: the last failed start attempt. */
  #startError: unknown
  #failing = false

  /** Resolves once the first attempt to connect and migrate has ended, whether it succeeded or not. */
  static async open (url: string, poolSize: number, context: StoreContext): Promise<PostgresStore> {
    let firstAttempt!: () => void
    const attempted = new Promise<void>((resolve) => { firstAttempt = resolve })
    const store = new PostgresStore(url, poolSize, context, firstAttempt)
    await attempted
    return store
  }

  private constructor (url: string, poolSize: number, { log, maxBatch, onBatch }: StoreContext, firstAttempt: () => void) {
    this.#log = log
    this.#pool = new pg.Pool({
      connectionString: url,
      max: poolSize,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      application_name: 'plant-store'
    })
    // An idle connection the server drops (a restart, a network cut) is reported here;
    // unheard, the event would end the process. The pool replaces the connection.
    this.#pool.on('error', (err) => this.#outage(err))
    this.#creates = new GroupCommit((plants) => this.#createBatch(plants), maxBatch, onBatch)
    this.#started = this.#start(firstAttempt)
  }

  async create (plant: PlantRecord): Promise<CreateResult> {
    this.#checkReady()
    return await this.#creates.submit(plant)
  }

  async get (id: bigint): Promise<PlantRecord | undefined> {
    const [row] = (await this.#query<Row>(`${SELECT_PLANTS} WHERE id = $1`, [String(id)])).rows
    return row === undefined ? undefined : toPlant(row)
  }

  async list ({ limit, after, tag }: ListQuery): Promise<PlantRecord[]> {
    const from = after === undefined ? INT64_MIN : after + 1n
    if (from > INT64_MAX) return []
    const { rows } = tag === undefined
      ? await this.#query<Row>(`${SELECT_PLANTS} WHERE id >= $1 ORDER BY id LIMIT $2`, [String(from), limit])
      : await this.#query<Row>(`${SELECT_PLANTS} WHERE tag = $1 AND id >= $2 ORDER BY id LIMIT $3`, [utf8(tag), String(from), limit])
    return rows.map(toPlant)
  }

  // A single statement: it commits on its own, and holding one row lock at a time it
  // cannot deadlock with another instance's batch.
  async delete (id: bigint): Promise<boolean> {
    return (await this.#query('DELETE FROM plants WHERE id = $1', [String(id)])).rowCount === 1
  }

  async ping (): Promise<void> {
    await this.#query('SELECT 1')
  }

  async close (): Promise<void> {
    this.#closing.abort()
    await this.#started
    await this.#creates.drain()
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

  #checkReady (): void {
    if (!this.#ready) throw new StoreUnavailable({ cause: this.#startError })
  }

  /**
   * Runs a statement once the store is ready, turning an unreachable database into a
   * 503; the outage and the recovery are each logged once. Any other error is a bug
   * and stays one (a 500).
   */
  async #query<R extends pg.QueryResultRow = pg.QueryResultRow> (text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    this.#checkReady()
    try {
      const result = await this.#pool.query<R>(text, values)
      if (this.#failing) {
        this.#failing = false
        this.#log.info('the PostgreSQL store is available again')
      }
      return result
    } catch (err) {
      if (!unavailable(err)) throw err
      this.#outage(err)
      throw new StoreUnavailable({ cause: err })
    }
  }

  #outage (err: unknown): void {
    if (this.#failing) return
    this.#failing = true
    this.#log.error({ err }, 'the PostgreSQL store is unavailable; answering 503 until it recovers')
  }

  /**
   * One statement inserts the whole batch, ids in ascending order: two instances'
   * batches then take their row locks in the same order and cannot deadlock. The ids
   * it did not insert were there already; reading them tells a retry from a conflict.
   * Within the batch the first create of an id is the one inserted, later ones compare
   * with it.
   */
  async #createBatch (plants: PlantRecord[]): Promise<CreateResult[]> {
    const stored = new Map<bigint, PlantRecord>()
    const created = new Set<PlantRecord>()
    const firsts = new Map<bigint, PlantRecord>()
    for (const plant of plants) if (!firsts.has(plant.id)) firsts.set(plant.id, plant)
    let pending = [...firsts.values()]
    while (pending.length > 0) {
      const { rows: insertedRows } = await this.#query<{ id: string }>(
        `INSERT INTO plants (id, name, tag)
         SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::bytea[]) AS batch (id, name, tag) ORDER BY id
         ON CONFLICT (id) DO NOTHING
         RETURNING id`,
        [pending.map((p) => String(p.id)), pending.map((p) => utf8(p.name)), pending.map((p) => p.tag === undefined ? null : utf8(p.tag))]
      )
      const inserted = new Set(insertedRows.map((row) => BigInt(row.id)))
      for (const plant of pending) {
        if (!inserted.has(plant.id)) continue
        stored.set(plant.id, plant)
        created.add(plant)
      }
      const present = pending.filter((plant) => !inserted.has(plant.id))
      if (present.length === 0) break
      const { rows } = await this.#query<Row>(`${SELECT_PLANTS} WHERE id = ANY($1::bigint[])`, [present.map((p) => String(p.id))])
      for (const row of rows) stored.set(BigInt(row.id), toPlant(row))
      // Deleted by another instance between the two statements: insert it again.
      pending = present.filter((plant) => !stored.has(plant.id))
    }
    return plants.map((plant) => {
      if (created.has(plant)) return { outcome: 'created', plant }
      const existing = stored.get(plant.id)!
      return { outcome: samePlant(existing, plant) ? 'unchanged' : 'conflict', plant: existing }
    })
  }
}

function unavailable (err: unknown): boolean {
  const { code, message } = err as { code?: unknown, message?: unknown }
  if (typeof code === 'string') return NETWORK_ERRORS.has(code) || UNAVAILABLE_SQLSTATE.test(code)
  return typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)
}

function utf8 (text: string): Buffer {
  return Buffer.from(text, 'utf8')
}

function toPlant ({ id, name, tag }: Row): PlantRecord {
  const plant = { id: BigInt(id), name: name.toString('utf8') }
  return tag === null ? plant : { ...plant, tag: tag.toString('utf8') }
}
