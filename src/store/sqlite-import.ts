import type Database from 'better-sqlite3'
import { pages } from './sqlite-export.ts'
import { restartHistory, latestSeq } from './sqlite-history.ts'
import { openDatabase } from './sqlite-open.ts'
import type { StoredPlant } from './store.ts'
import type { DeliveryRecord, EventRecord, Held, StoreLoad, SubscriptionRecord } from './transfer.ts'

// How long the load waits for the write lock: a service left running on the file holds it.
const BUSY_MS = 5000

/** A SQLite file written in one IMMEDIATE transaction: the file is the copy once it commits, as it was if not. */
export class SqliteLoad implements StoreLoad {
  readonly held: Held
  readonly #db: Database.Database

  /** Opens (creating and migrating it if need be) the file at `path`, and takes its write lock. */
  constructor (path: string) {
    this.#db = openDatabase(path)
    try {
      this.#db.pragma(`busy_timeout = ${BUSY_MS}`)
      // The commit is on disk when the command says it is done: no service syncs the WAL after it.
      this.#db.pragma('synchronous = FULL')
      this.#db.exec('BEGIN IMMEDIATE')
      const count = (sql: string): number => Number(this.#db.prepare<[], bigint>(sql).pluck().get())
      this.held = { plants: count('SELECT count(*) FROM plants'), subscriptions: count('SELECT count(*) FROM webhooks'), latest: latestSeq(this.#db) }
    } catch (err) {
      this.#db.close()
      throw err
    }
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
