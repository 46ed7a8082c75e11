import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { INT64_MAX, INT64_MIN } from '../../schemas/index.js'
import { StoreUnavailable } from './errors.js'
import { GroupCommit } from './group-commit.js'
import { migrate } from './sqlite-schema.js'
import { samePlant, type CreateResult, type ListQuery, type PlantRecord, type PlantStore, type StoreContext } from './store.js'

// SQLite answers these when the file, the disk or a lock is the problem, not the
// request: the client should retry later (503), and the service recovers by itself.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CORRUPT|NOTADB|CANTOPEN|READONLY|PROTOCOL)/

// better-sqlite3 waits for a lock on the event loop, so the wait must stay short.
const BUSY_TIMEOUT_MS = 250

interface Row { id: bigint, name: string, tag: string | null }
type Write = () => unknown

/**
 * Plants in a SQLite file. WAL with synchronous=FULL: a write is acknowledged only
 * after its transaction is on disk. Writes arriving together share one commit.
 */
export class SqliteStore implements PlantStore {
  readonly #db: Database.Database
  readonly #log: StoreContext['log']
  readonly #statements
  readonly #writes: GroupCommit<Write, unknown>
  #failing = false

  constructor (path: string, { log, maxBatch, onBatch }: StoreContext) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
    this.#db = new Database(path, { timeout: BUSY_TIMEOUT_MS })
    this.#log = log
    try {
      this.#db.pragma('journal_mode = WAL')
      this.#db.pragma('synchronous = FULL')
      this.#db.defaultSafeIntegers(true)
      migrate(this.#db)
    } catch (err) {
      this.#db.close()
      throw err
    }
    const db = this.#db
    this.#statements = {
      insert: db.prepare<[bigint, string, string | null]>('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'),
      get: db.prepare<[bigint], Row>('SELECT id, name, tag FROM plants WHERE id = ?'),
      page: db.prepare<[bigint, number], Row>('SELECT id, name, tag FROM plants WHERE id >= ? ORDER BY id LIMIT ?'),
      pageByTag: db.prepare<[string, bigint, number], Row>('SELECT id, name, tag FROM plants WHERE tag = ? AND id >= ? ORDER BY id LIMIT ?'),
      delete: db.prepare<[bigint]>('DELETE FROM plants WHERE id = ?'),
      ping: db.prepare('SELECT 1')
    }
    const commit = db.transaction((writes: Write[]) => writes.map((write) => write()))
    this.#writes = new GroupCommit((writes) => this.#run(() => commit.immediate(writes)), maxBatch, onBatch)
  }

  async create (plant: PlantRecord): Promise<CreateResult> {
    return await this.#write((): CreateResult => {
      if (this.#statements.insert.run(plant.id, plant.name, plant.tag ?? null).changes === 1) return { outcome: 'created', plant }
      const existing = toPlant(this.#statements.get.get(plant.id)!)
      return { outcome: samePlant(existing, plant) ? 'unchanged' : 'conflict', plant: existing }
    })
  }

  async get (id: bigint): Promise<PlantRecord | undefined> {
    const row = this.#run(() => this.#statements.get.get(id))
    return row === undefined ? undefined : toPlant(row)
  }

  async list ({ limit, after, tag }: ListQuery): Promise<PlantRecord[]> {
    const from = after === undefined ? INT64_MIN : after + 1n
    if (from > INT64_MAX) return []
    const rows = this.#run(() => tag === undefined
      ? this.#statements.page.all(from, limit)
      : this.#statements.pageByTag.all(tag, from, limit))
    return rows.map(toPlant)
  }

  async delete (id: bigint): Promise<boolean> {
    return await this.#write(() => this.#statements.delete.run(id).changes === 1)
  }

  async ping (): Promise<void> {
    this.#run(() => this.#statements.ping.get())
  }

  async close (): Promise<void> {
    await this.#writes.drain()
    this.#db.close()
  }

  async #write<Result> (write: () => Result): Promise<Result> {
    return await this.#writes.submit(write) as Result
  }

  /** Runs a database call, turning an unavailable file or disk into a 503, logged once per outage. */
  #run<T> (operation: () => T): T {
    try {
      const result = operation()
      if (this.#failing) {
        this.#failing = false
        this.#log.info('the SQLite store is available again')
      }
      return result
    } catch (err) {
      const code = (err as { code?: unknown }).code
      if (typeof code !== 'string' || !UNAVAILABLE.test(code)) throw err
      if (!this.#failing) {
        this.#failing = true
        this.#log.error({ err }, 'the SQLite store is unavailable; answering 503 until it recovers')
      }
      throw new StoreUnavailable({ cause: err })
    }
  }
}

function toPlant ({ id, name, tag }: Row): PlantRecord {
  return tag === null ? { id, name } : { id, name, tag }
}
