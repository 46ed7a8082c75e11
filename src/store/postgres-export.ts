import type pg from 'pg'
import { SELECT_PLANTS, toPlant, type Row } from './postgres-plants.ts'
import { openSession, type PostgresSession } from './postgres-session.ts'
import { latestSeq } from './postgres-history.ts'
import type { StoredPlant } from './store.ts'
import {
  TRANSFER_CHUNK, type DeliveryRecord, type EventRecord, type SnapshotSummary, type StoreSnapshot, type SubscriptionRecord
} from './transfer.ts'
import {
  DELIVERY_COLUMNS, EVENT_COLUMNS, OWED_EVENT, PENDING, SUBSCRIPTION_COLUMNS, toDeliveryRecord, toEventRecord, toSubscriptionRecord,
  type DeliveryRow, type EventRow, type SubscriptionRow
} from './transfer-rows.ts'

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
    return (await this.#session.client.query<SubscriptionRow>(`SELECT ${SUBSCRIPTION_COLUMNS} FROM webhooks ORDER BY seq`)).rows.map(toSubscriptionRecord)
  }

  async * events (): AsyncIterable<EventRecord[]> {
    yield * this.#pages(`SELECT ${EVENT_COLUMNS} FROM webhook_events WHERE seq > $1 AND ${OWED_EVENT}`, toEventRecord)
  }

  async * deliveries (): AsyncIterable<DeliveryRecord[]> {
    yield * this.#pages(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE seq > $1 AND ${PENDING}`, toDeliveryRecord)
  }

  /** The rows of `select` (its seq after $1), ascending by seq, a chunk at a time. */
  async * #pages<Row extends EventRow | DeliveryRow, Record> (select: string, record: (row: Row) => Record): AsyncIterable<Record[]> {
    for (let after = '0'; ;) {
      const { rows } = await this.#session.client.query<Row>(`${select} ORDER BY seq LIMIT ${TRANSFER_CHUNK}`, [after])
      if (rows.length === 0) return
      after = String(rows.at(-1)!.seq)
      yield rows.map(record)
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
