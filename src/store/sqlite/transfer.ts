import type Database from 'better-sqlite3'
import { openDatabase } from './open.ts'
import { latestSeq, restartHistory } from './history.ts'
import type { StoredPlant } from '../store.ts'
import {
  TRANSFER_CHUNK, type DeliveryRecord, type EventRecord, type Held, type SnapshotSummary, type StoreLoad, type StoreSnapshot, type SubscriptionRecord
} from '../transfer.ts'
import {
  DELIVERY_COLUMNS, EVENT_COLUMNS, OWED_EVENT, PENDING, SUBSCRIPTION_COLUMNS, toDeliveryRecord, toEventRecord, toSubscriptionRecord,
  type DeliveryRow, type EventRow, type SubscriptionRow
} from '../transfer-rows.ts'

// A SQLite file read out (a snapshot) and written in (a load), each in one transaction,
// synchronously, a chunk at a time.

// How long a statement waits for a lock another connection holds: a checkpoint's, briefly,
// or the write lock of a service left running on the file.
const BUSY_MS = 5000

/**
 * Opens (creating and migrating it, as the service would) the file at `path`, in a
 * transaction `begin` starts; `durable`: its commit is on disk when the command says it is done.
 */
function open (path: string, begin: string, durable = false): { db: Database.Database, held: Held } {
  const db = openDatabase(path)
  try {
    db.pragma(`busy_timeout = ${BUSY_MS}`)
    if (durable) db.pragma('synchronous = FULL')
    db.exec(begin)
    return { db, held: { plants: count(db, 'SELECT count(*) FROM plants'), subscriptions: count(db, 'SELECT count(*) FROM webhooks'), latest: latestSeq(db) } }
  } catch (err) {
    db.close()
    throw err
  }
}

function count (db: Database.Database, sql: string): number {
  return Number(db.prepare<[], bigint>(sql).pluck().get())
}

/** In WAL mode, a read transaction sees the file as it was when it began, while the service goes on writing beside it. */
export class SqliteSnapshot implements StoreSnapshot {
  readonly summary: SnapshotSummary
  readonly #db: Database.Database

  /** Opens the file at `path`, which must exist. */
  constructor (path: string) {
    const { db, held } = open(path, 'BEGIN')
    this.#db = db
    this.summary = { ...held, pending: count(db, `SELECT count(*) FROM webhook_deliveries WHERE ${PENDING}`) }
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

/** An IMMEDIATE transaction, its write lock taken at once: the file is the copy once it commits, as it was if not. */
export class SqliteLoad implements StoreLoad {
  readonly held: Held
  readonly #db: Database.Database

  /** Opens the file at `path`, creating it if need be. */
  constructor (path: string) {
    const { db, held } = open(path, 'BEGIN IMMEDIATE', true)
    this.#db = db
    this.held = held
  }

  async clear (): Promise<void> {
    this.#db.exec('DELETE FROM plants; DELETE FROM webhooks; DELETE FROM webhook_deliveries; DELETE FROM webhook_events; DELETE FROM plant_erasures; DELETE FROM idempotency_keys')
  }

  async plants (chunks: AsyncIterable<StoredPlant[]>): Promise<void> {
    const insert = this.#db.prepare<[bigint, string, string | null]>('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?)')
    for await (const chunk of chunks) for (const { id, name, tag } of chunk) insert.run(id, name, tag ?? null)
  }

  async subscriptions (subscriptions: SubscriptionRecord[]): Promise<void> {
    const insert = this.#db.prepare<[SubscriptionRecord]>(`INSERT INTO webhooks (id, url, secret, events, created_at, pending, disabled_at,
      missed_since, missed_from, replay_from, replay_to) VALUES (@id, @url, @secret, @events, @createdAt, @pending, @disabledAt,
      @missedSince, @missedFrom, @replayFrom, @replayTo)`)
    for (const subscription of subscriptions) insert.run(subscription)
  }

  async events (chunks: AsyncIterable<EventRecord[]>): Promise<void> {
    const insert = this.#db.prepare<[EventRecord]>(`INSERT INTO webhook_events (seq, plant_id, type, payload, created_at, trace_context)
      VALUES (@seq, @plantId, @type, @payload, @createdAt, @traceContext)`)
    for await (const chunk of chunks) for (const event of chunk) insert.run(event)
  }

  async deliveries (chunks: AsyncIterable<DeliveryRecord[]>): Promise<void> {
    // A delivery's own payload column is left empty: the payload is its event's.
    const insert = this.#db.prepare<[DeliveryRecord]>(`INSERT INTO webhook_deliveries (id, webhook_id, plant_id, event_seq, payload, attempts,
      last_status_code, last_error, next_attempt_at, created_at) VALUES (@id, @webhookId, @plantId, @eventSeq, X'', @attempts,
      @lastStatusCode, @lastError, @nextAttemptAt, @createdAt)`)
    for await (const chunk of chunks) for (const delivery of chunk) insert.run(delivery)
  }

  async restartHistory (latest: number): Promise<number> {
    return restartHistory(this.#db, latest)
  }

  async * written (): AsyncIterable<StoredPlant[]> {
    yield * pages(this.#db)
  }

  async commit (): Promise<void> {
    this.#db.exec('COMMIT')
  }

  async close (): Promise<void> {
    if (this.#db.inTransaction) this.#db.exec('ROLLBACK')
    this.#db.close()
  }
}

/** The plants of a connection, ascending by id, a chunk at a time: within a transaction, one snapshot. */
function * pages (db: Database.Database): Generator<StoredPlant[]> {
  const first = db.prepare<[], { id: bigint, name: string, tag: string | null }>(`SELECT id, name, tag FROM plants ORDER BY id LIMIT ${TRANSFER_CHUNK}`)
  const next = db.prepare<[bigint], { id: bigint, name: string, tag: string | null }>(`SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT ${TRANSFER_CHUNK}`)
  for (let rows = first.all(); rows.length > 0; rows = next.all(rows.at(-1)!.id)) {
    yield rows.map(({ id, name, tag }) => tag === null ? { id, name } : { id, name, tag })
  }
}
