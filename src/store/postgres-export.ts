import type pg from 'pg'
import { SELECT_PLANTS, toPlant, type Row } from './postgres-plants.ts'
import { openSession, type PostgresSession } from './postgres-session.ts'
import { latestSeq } from './postgres-history.ts'
import type { StoredPlant } from './store.ts'
import {
  TRANSFER_CHUNK, type DeliveryRecord, type EventRecord, type SnapshotSummary, type StoreSnapshot, type SubscriptionRecord
} from './transfer.ts'

type Integer = string | null
type Time = Date | null
interface SubscriptionRow {
  id: string,
  url: string,
  secret: string,
  events: number,
  created_at: Date,
  pending: string,
  disabled_at: Time,
  missed_since: Time,
  missed_from: Integer,
  replay_from: Integer,
  replay_to: Integer
}
interface EventRow { seq: string, plant_id: string, type: string, payload: Buffer | null, created_at: Date, trace_context: string | null }
interface DeliveryRow {
  seq: string,
  id: string,
  webhook_id: string,
  plant_id: string,
  event_seq: string,
  attempts: number,
  last_status_code: number | null,
  last_error: string | null,
  next_attempt_at: Time,
  created_at: Date
}

const number = (value: Integer): number | null => value === null ? null : Number(value)
const ms = (value: Time): number | null => value === null ? null : value.getTime()

// The oldest event a disabled or replaying subscription is still owed.
const OWED_FROM = 'SELECT min(coalesce(missed_from, replay_from)) FROM webhooks'
const PENDING = "status = 'pending' AND webhook_id IN (SELECT id FROM webhooks)"

/**
 * A PostgreSQL store read in one REPEATABLE READ, READ ONLY transaction: every statement
 * sees the database as its first did, while the instances go on writing.
 */
export class PostgresSnapshot implements StoreSnapshot {
  readonly summary: SnapshotSummary
  readonly #session: PostgresSession

  private constructor (session: PostgresSession, summary: SnapshotSummary) {
    this.#session = session
    this.summary = summary
  }

  static async open (url: string): Promise<PostgresSnapshot> {
    const session = await openSession(url)
    try {
      const { client } = session
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
      // The snapshot is taken by the first statement: the counts and the latest seq are of it.
      const { rows } = await client.query<{ plants: string, subscriptions: string, pending: string }>(`SELECT
        (SELECT count(*) FROM plants) AS plants, (SELECT count(*) FROM webhooks) AS subscriptions,
        (SELECT count(*) FROM webhook_deliveries WHERE ${PENDING}) AS pending`)
      const { plants, subscriptions, pending } = rows[0]
      const summary = { plants: Number(plants), subscriptions: Number(subscriptions), pending: Number(pending), latest: await latestSeq(client) }
      return new PostgresSnapshot(session, summary)
    } catch (err) {
      await session.close()
      throw err
    }
  }

  async * plants (): AsyncIterable<StoredPlant[]> {
    yield * plantPages(this.#session.client)
  }

  async subscriptions (): Promise<SubscriptionRecord[]> {
    const { rows } = await this.#session.client.query<SubscriptionRow>(`SELECT id, url, secret, events, created_at, pending, disabled_at,
      missed_since, missed_from, replay_from, replay_to FROM webhooks ORDER BY seq`)
    return rows.map((row) => ({
      id: row.id,
      url: row.url,
      secret: row.secret,
      events: row.events,
      createdAt: row.created_at.getTime(),
      pending: Number(row.pending),
      disabledAt: ms(row.disabled_at),
      missedSince: ms(row.missed_since),
      missedFrom: number(row.missed_from),
      replayFrom: number(row.replay_from),
      replayTo: number(row.replay_to)
    }))
  }

  async * events (): AsyncIterable<EventRecord[]> {
    for (let after = '0'; ;) {
      const { rows } = await this.#session.client.query<EventRow>(`SELECT seq, plant_id, type, payload, created_at, trace_context FROM webhook_events
        WHERE seq > $1 AND (seq >= coalesce((${OWED_FROM}), 9223372036854775807)
          OR EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_seq = webhook_events.seq AND ${PENDING}))
        ORDER BY seq LIMIT ${TRANSFER_CHUNK}`, [after])
      if (rows.length === 0) return
      after = rows.at(-1)!.seq
      yield rows.map((row) => ({
        seq: Number(row.seq),
        plantId: BigInt(row.plant_id),
        type: row.type,
        payload: row.payload,
        createdAt: row.created_at.getTime(),
        traceContext: row.trace_context
      }))
    }
  }

  async * deliveries (): AsyncIterable<DeliveryRecord[]> {
    for (let after = '0'; ;) {
      const { rows } = await this.#session.client.query<DeliveryRow>(`SELECT seq, id, webhook_id, plant_id, event_seq, attempts, last_status_code,
        last_error, next_attempt_at, created_at FROM webhook_deliveries WHERE seq > $1 AND ${PENDING} ORDER BY seq LIMIT ${TRANSFER_CHUNK}`, [after])
      if (rows.length === 0) return
      after = rows.at(-1)!.seq
      yield rows.map((row) => ({
        id: row.id,
        webhookId: row.webhook_id,
        plantId: BigInt(row.plant_id),
        eventSeq: Number(row.event_seq),
        attempts: row.attempts,
        lastStatusCode: row.last_status_code,
        lastError: row.last_error,
        nextAttemptAt: ms(row.next_attempt_at),
        createdAt: row.created_at.getTime()
      }))
    }
  }

  async close (): Promise<void> {
    await this.#session.client.query('ROLLBACK').catch(() => {})
    await this.#session.close()
  }
}

/** The plants a connection sees, ascending by id, a chunk at a time: within a transaction, one snapshot. */
export async function * plantPages (client: pg.ClientBase): AsyncIterable<StoredPlant[]> {
  let { rows } = await client.query<Row>(`${SELECT_PLANTS} ORDER BY id LIMIT ${TRANSFER_CHUNK}`)
  while (rows.length > 0) {
    yield rows.map(toPlant)
    ;({ rows } = await client.query<Row>(`${SELECT_PLANTS} WHERE id > $1 ORDER BY id LIMIT ${TRANSFER_CHUNK}`, [rows.at(-1)!.id]))
  }
}
