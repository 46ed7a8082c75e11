import type Database from 'better-sqlite3'
import { openDatabase } from './sqlite-open.ts'
import { latestSeq } from './sqlite-history.ts'
import type { StoredPlant } from './store.ts'
import {
  TRANSFER_CHUNK, type DeliveryRecord, type EventRecord, type SnapshotSummary, type StoreSnapshot, type SubscriptionRecord
} from './transfer.ts'
import {
  DELIVERY_COLUMNS, EVENT_COLUMNS, OWED_EVENT, PENDING, SUBSCRIPTION_COLUMNS, toDeliveryRecord, toEventRecord, toSubscriptionRecord,
  type DeliveryRow, type EventRow, type SubscriptionRow
} from './transfer-rows.ts'

// How long a statement waits for a lock another connection holds (a checkpoint's, briefly).
const BUSY_MS = 5000

/**
 * A SQLite store read in one read transaction: in WAL mode it sees the file as it was
 * when the transaction began, while the service goes on writing beside it. Reads are
 * synchronous, a chunk at a time.
 */
export class SqliteSnapshot implements StoreSnapshot {
  readonly summary: SnapshotSummary
  readonly #db: Database.Database

  /** Opens (migrating it, as the service would) the file at `path`, which must exist. */
  constructor (path: string) {
    this.#db = openDatabase(path)
    this.#db.pragma(`busy_timeout = ${BUSY_MS}`)
    this.#db.exec('BEGIN')
    const count = (sql: string): number => Number(this.#db.prepare<[], bigint>(sql).pluck().get())
    this.summary = {
      plants: count('SELECT count(*) FROM plants'),
      subscriptions: count('SELECT count(*) FROM webhooks'),
      pending: count(`SELECT count(*) FROM webhook_deliveries WHERE ${PENDING}`),
      latest: latestSeq(this.#db)
    }
  }

  async * plants (): AsyncIterable<StoredPlant[]> {
    yield * pages(this.#db)
  }

  async subscriptions (): Promise<SubscriptionRecord[]> {
    return this.#db.prepare<[], SubscriptionRow>(`SELECT ${SUBSCRIPTION_COLUMNS} FROM webhooks ORDER BY rowid`).all().map(toSubscriptionRecord)
  }

  async * events (): AsyncIterable<EventRecord[]> {
    const page = this.#db.prepare<[bigint], EventRow & { seq: bigint }>(`SELECT ${EVENT_COLUMNS} FROM webhook_events
      WHERE seq > ? AND ${OWED_EVENT} ORDER BY seq LIMIT ${TRANSFER_CHUNK}`)
    for (let rows = page.all(0n); rows.length > 0; rows = page.all(rows.at(-1)!.seq)) yield rows.map(toEventRecord)
  }

  async * deliveries (): AsyncIterable<DeliveryRecord[]> {
    const page = this.#db.prepare<[bigint], DeliveryRow & { seq: bigint }>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
      WHERE seq > ? AND ${PENDING} ORDER BY seq LIMIT ${TRANSFER_CHUNK}`)
    for (let rows = page.all(0n); rows.length > 0; rows = page.all(rows.at(-1)!.seq)) yield rows.map(toDeliveryRecord)
  }

  async close (): Promise<void> {
    if (this.#db.inTransaction) this.#db.exec('COMMIT')
    this.#db.close()
  }
}

/** The plants of a connection, ascending by id, a chunk at a time: within a transaction, one snapshot. */
export function * pages (db: Database.Database): Generator<StoredPlant[]> {
  const first = db.prepare<[], { id: bigint, name: string, tag: string | null }>(`SELECT id, name, tag FROM plants ORDER BY id LIMIT ${TRANSFER_CHUNK}`)
  const next = db.prepare<[bigint], { id: bigint, name: string, tag: string | null }>(`SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT ${TRANSFER_CHUNK}`)
  for (let rows = first.all(); rows.length > 0; rows = next.all(rows.at(-1)!.id)) {
    yield rows.map(({ id, name, tag }) => tag === null ? { id, name } : { id, name, tag })
  }
}
