import type Database from 'better-sqlite3'
import { openDatabase } from './sqlite-open.ts'
import { latestSeq } from './sqlite-history.ts'
import type { StoredPlant } from './store.ts'
import {
  TRANSFER_CHUNK, type DeliveryRecord, type EventRecord, type SnapshotSummary, type StoreSnapshot, type SubscriptionRecord
} from './transfer.ts'

// How long a statement waits for a lock another connection holds (a checkpoint's, briefly).
const BUSY_MS = 5000

type Integer = bigint | null
interface SubscriptionRow {
  id: string,
  url: string,
  secret: string,
  events: bigint,
  created_at: bigint,
  pending: bigint,
  disabled_at: Integer,
  missed_since: Integer,
  missed_from: Integer,
  replay_from: Integer,
  replay_to: Integer
}
interface EventRow { seq: bigint, plant_id: bigint, type: string, payload: Buffer | null, created_at: bigint, trace_context: string | null }
interface DeliveryRow {
  seq: bigint,
  id: string,
  webhook_id: string,
  plant_id: bigint,
  event_seq: bigint,
  attempts: bigint,
  last_status_code: Integer,
  last_error: string | null,
  next_attempt_at: Integer,
  created_at: bigint
}

const number = (value: Integer): number | null => value === null ? null : Number(value)

// The oldest event a disabled or replaying subscription is still owed.
const OWED_FROM = 'SELECT min(coalesce(missed_from, replay_from)) FROM webhooks'
const PENDING = "status = 'pending' AND webhook_id IN (SELECT id FROM webhooks)"

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
    const rows = this.#db.prepare<[], SubscriptionRow>(`SELECT id, url, secret, events, created_at, pending, disabled_at, missed_since,
      missed_from, replay_from, replay_to FROM webhooks ORDER BY rowid`).all()
    return rows.map((row) => ({
      id: row.id,
      url: row.url,
      secret: row.secret,
      events: Number(row.events),
      createdAt: Number(row.created_at),
      pending: Number(row.pending),
      disabledAt: number(row.disabled_at),
      missedSince: number(row.missed_since),
      missedFrom: number(row.missed_from),
      replayFrom: number(row.replay_from),
      replayTo: number(row.replay_to)
    }))
  }

  async * events (): AsyncIterable<EventRecord[]> {
    const page = this.#db.prepare<[bigint], EventRow>(`SELECT seq, plant_id, type, payload, created_at, trace_context FROM webhook_events
      WHERE seq > ? AND (seq >= coalesce((${OWED_FROM}), 9223372036854775807)
        OR EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_seq = webhook_events.seq AND ${PENDING}))
      ORDER BY seq LIMIT ${TRANSFER_CHUNK}`)
    for (let after = 0n; ;) {
      const rows = page.all(after)
      if (rows.length === 0) return
      after = rows.at(-1)!.seq
      yield rows.map((row) => ({
        seq: Number(row.seq),
        plantId: row.plant_id,
        type: row.type,
        payload: row.payload,
        createdAt: Number(row.created_at),
        traceContext: row.trace_context
      }))
    }
  }

  async * deliveries (): AsyncIterable<DeliveryRecord[]> {
    const page = this.#db.prepare<[bigint], DeliveryRow>(`SELECT seq, id, webhook_id, plant_id, event_seq, attempts, last_status_code, last_error,
      next_attempt_at, created_at FROM webhook_deliveries WHERE seq > ? AND ${PENDING} ORDER BY seq LIMIT ${TRANSFER_CHUNK}`)
    for (let after = 0n; ;) {
      const rows = page.all(after)
      if (rows.length === 0) return
      after = rows.at(-1)!.seq
      yield rows.map((row) => ({
        id: row.id,
        webhookId: row.webhook_id,
        plantId: row.plant_id,
        eventSeq: Number(row.event_seq),
        attempts: Number(row.attempts),
        lastStatusCode: number(row.last_status_code),
        lastError: row.last_error,
        nextAttemptAt: number(row.next_attempt_at),
        createdAt: Number(row.created_at)
      }))
    }
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
