import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { SELECT_PLANTS, toPlant, type Row } from './plants.ts'
import { latestSeq, restartHistory } from './history.ts'
import { openSession, type PostgresSession } from './session.ts'
import { EVENTS_LOCK } from './writes.ts'
import type { StoredPlant } from '../store.ts'
import {
  TRANSFER_CHUNK, type DeliveryRecord, type EventRecord, type Held, type SnapshotSummary, type StoreLoad, type StoreSnapshot, type SubscriptionRecord
} from '../transfer.ts'
import {
  DELIVERY_COLUMNS, EVENT_COLUMNS, OWED_EVENT, PENDING, SUBSCRIPTION_COLUMNS, toDeliveryRecord, toEventRecord, toSubscriptionRecord,
  type DeliveryRow, type EventRow, type SubscriptionRow
} from '../transfer-rows.ts'

// A PostgreSQL database read out (a snapshot) and written in (a load), each in one transaction.

/** A session of the database at `url` in the transaction `statements` begin, with what it holds counted. */
async function begin (url: string, statements: string): Promise<{ session: PostgresSession, summary: SnapshotSummary }> {
  const session = await openSession(url)
  try {
    const { client } = session
    await client.query(statements)
    const { rows: [counts] } = await client.query<{ plants: string, subscriptions: string, pending: string }>(`SELECT
      (SELECT count(*) FROM plants) AS plants, (SELECT count(*) FROM webhooks) AS subscriptions,
      (SELECT count(*) FROM webhook_deliveries WHERE ${PENDING}) AS pending`)
    const summary = { plants: Number(counts.plants), subscriptions: Number(counts.subscriptions), pending: Number(counts.pending), latest: await latestSeq(client) }
    return { session, summary }
  } catch (err) {
    await session.close()
    throw err
  }
}

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
    // The snapshot is taken by the first statement: the counts and the latest seq are of it.
    const { session, summary } = await begin(url, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    return new PostgresSnapshot(session, summary)
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

/**
 * A PostgreSQL database written in one transaction, the plants through COPY FROM STDIN. It
 * holds the lock of every transaction writing events from the start: instances already
 * running on the destination wait for the commit.
 */
export class PostgresLoad implements StoreLoad {
  readonly held: Held
  readonly #session: PostgresSession
  #committed = false

  private constructor (session: PostgresSession, held: Held) {
    this.#session = session
    this.held = held
  }

  static async open (url: string): Promise<PostgresLoad> {
    const { session, summary: { plants, subscriptions, latest } } = await begin(url, `BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock(${EVENTS_LOCK})`)
    return new PostgresLoad(session, { plants, subscriptions, latest })
  }

  async clear (): Promise<void> {
    await this.#session.client.query('TRUNCATE plants, webhooks, webhook_deliveries, webhook_events, plant_erasures, idempotency_keys')
  }

  async plants (chunks: AsyncIterable<StoredPlant[]>): Promise<void> {
    await pipeline(Readable.from(copyLines(chunks)), this.#session.client.query(copyFrom('COPY plants (id, name, tag) FROM STDIN')))
  }

  async subscriptions (subscriptions: SubscriptionRecord[]): Promise<void> {
    const column = <K extends keyof SubscriptionRecord>(key: K): Array<SubscriptionRecord[K]> => subscriptions.map((s) => s[key])
    const time = (key: 'createdAt' | 'disabledAt' | 'missedSince'): Array<string | null> => subscriptions.map((s) => iso(s[key]))
    // In order, so that the identity column keeps them oldest first.
    await this.#session.client.query(`INSERT INTO webhooks (id, url, secret, events, created_at, pending, disabled_at, missed_since, missed_from,
      replay_from, replay_to)
      SELECT id, url, secret, events, created_at, pending, disabled_at, missed_since, missed_from, replay_from, replay_to
      FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::timestamptz[], $6::bigint[], $7::timestamptz[], $8::timestamptz[],
        $9::bigint[], $10::bigint[], $11::bigint[])
        WITH ORDINALITY AS s (id, url, secret, events, created_at, pending, disabled_at, missed_since, missed_from, replay_from, replay_to, ord)
      ORDER BY ord`,
    [column('id'), column('url'), column('secret'), column('events'), time('createdAt'), column('pending'), time('disabledAt'), time('missedSince'),
      column('missedFrom'), column('replayFrom'), column('replayTo')])
  }

  async events (chunks: AsyncIterable<EventRecord[]>): Promise<void> {
    for await (const events of chunks) {
      // Under their own seqs, which the pending deliveries and the subscriptions' replays name.
      await this.#session.client.query(`INSERT INTO webhook_events (seq, plant_id, type, payload, created_at, trace_context) OVERRIDING SYSTEM VALUE
        SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bytea[], $5::timestamptz[], $6::text[])`,
      [events.map((e) => e.seq), events.map((e) => String(e.plantId)), events.map((e) => e.type), events.map((e) => e.payload),
        events.map((e) => iso(e.createdAt)), events.map((e) => e.traceContext)])
    }
  }

  async deliveries (chunks: AsyncIterable<DeliveryRecord[]>): Promise<void> {
    for await (const deliveries of chunks) {
      await this.#session.client.query(`INSERT INTO webhook_deliveries (id, webhook_id, plant_id, event_seq, attempts, last_status_code, last_error,
        next_attempt_at, created_at)
        SELECT id, webhook_id, plant_id, event_seq, attempts, last_status_code, last_error, next_attempt_at, created_at FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::integer[], $6::integer[], $7::text[], $8::timestamptz[], $9::timestamptz[])
          WITH ORDINALITY AS d (id, webhook_id, plant_id, event_seq, attempts, last_status_code, last_error, next_attempt_at, created_at, ord)
        ORDER BY ord`,
      [deliveries.map((d) => d.id), deliveries.map((d) => d.webhookId), deliveries.map((d) => String(d.plantId)), deliveries.map((d) => d.eventSeq),
        deliveries.map((d) => d.attempts), deliveries.map((d) => d.lastStatusCode), deliveries.map((d) => d.lastError),
        deliveries.map((d) => iso(d.nextAttemptAt)), deliveries.map((d) => iso(d.createdAt))])
    }
  }

  async restartHistory (latest: number): Promise<number> {
    return await restartHistory(this.#session.client, latest)
  }

  async * written (): AsyncIterable<StoredPlant[]> {
    yield * plantPages(this.#session.client)
  }

  async commit (): Promise<void> {
    await this.#session.client.query('COMMIT')
    this.#committed = true
  }

  async close (): Promise<void> {
    if (!this.#committed) await this.#session.client.query('ROLLBACK').catch(() => {})
    await this.#session.close()
  }
}

const iso = (ms: number | null): string | null => ms === null ? null : new Date(ms).toISOString()

/** A bytea in COPY's text format: `\x` and its hex digits, the backslash escaped for COPY itself. */
const copyBytes = (text: string): string => `\\\\x${Buffer.from(text, 'utf8').toString('hex')}`

/** Each chunk of plants as lines of COPY's text format: id, name, tag (`\N`: none). */
async function * copyLines (chunks: AsyncIterable<StoredPlant[]>): AsyncIterable<string> {
  for await (const chunk of chunks) {
    yield chunk.map(({ id, name, tag }) => `${id}\t${copyBytes(name)}\t${tag === undefined ? '\\N' : copyBytes(tag)}\n`).join('')
  }
}

/** The plants a connection sees, ascending by id, a chunk at a time: within a transaction, one snapshot. */
async function * plantPages (client: pg.ClientBase): AsyncIterable<StoredPlant[]> {
  let { rows } = await client.query<Row>(`${SELECT_PLANTS} ORDER BY id LIMIT ${TRANSFER_CHUNK}`)
  while (rows.length > 0) {
    yield rows.map(toPlant)
    ;({ rows } = await client.query<Row>(`${SELECT_PLANTS} WHERE id > $1 ORDER BY id LIMIT ${TRANSFER_CHUNK}`, [rows.at(-1)!.id]))
  }
}
