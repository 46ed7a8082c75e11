import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import type { FastifyBaseLogger } from 'fastify'
import { StoreUnavailable } from '../http-errors.js'
import { GroupCommit } from './group-commit.js'
import { migrate } from './sqlite-schema.js'
import { samePlant, type CreateResult, type PlantRecord, type PlantStore } from './store.js'

// SQLite answers these when the file, the disk or a lock is the problem, not the
// request: the client should retry later (503), and the service recovers by itself.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CORRUPT|NOTADB|CANTOPEN|READONLY|PROTOCOL)/

const MAX_BATCH = 512
// better-sqlite3 waits for a lock on the event loop, so the wait must stay short.
const BUSY_TIMEOUT_MS = 250

interface Row { id: bigint, name: string, tag: string | null }

/**
 * Plants in a SQLite file. WAL with synchronous=FULL: a create is acknowledged only
 * after its transaction is on disk. Creates arriving together share one commit.
 */
export class SqliteStore implements PlantStore {
  readonly #db: Database.Database
  readonly #log: FastifyBaseLogger
  readonly #insert: Database.Statement<[bigint, string, string | null]>
  readonly #select: Database.Statement<[bigint], Row>
  readonly #creates: GroupCommit<PlantRecord, CreateResult>
  #failing = false

  constructor (path: string, log: FastifyBaseLogger) {
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
    this.#insert = this.#db.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING')
    this.#select = this.#db.prepare('SELECT id, name, tag FROM plants WHERE id = ?')
    const createAll = this.#db.transaction((plants: PlantRecord[]) => plants.map((plant) => this.#createOne(plant)))
    this.#creates = new GroupCommit((plants) => this.#run(() => createAll.immediate(plants)), MAX_BATCH)
  }

  async create (plant: PlantRecord): Promise<CreateResult> {
    return await this.#creates.submit(plant)
  }

  async close (): Promise<void> {
    await this.#creates.drain()
    this.#db.close()
  }

  #createOne (plant: PlantRecord): CreateResult {
    if (this.#insert.run(plant.id, plant.name, plant.tag ?? null).changes === 1) return { outcome: 'created', plant }
    const existing = toPlant(this.#select.get(plant.id)!)
    return { outcome: samePlant(existing, plant) ? 'unchanged' : 'conflict', plant: existing }
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
