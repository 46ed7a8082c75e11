import { randomBytes } from 'node:crypto'
import type Database from 'better-sqlite3'
import type { DeliveryStatus } from '../../schemas/webhook.ts'
import { WRITE_OVERHEAD_BYTES, type StoredPlant } from './store.ts'
import { DELIVERY_COLUMNS, SUBSCRIPTION_COLUMNS, toDelivery, toSubscription, type DeliveryRow, type SubscriptionRow } from './webhook-rows.ts'
import {
  announcement,
  type AttemptRecord, type DeliveryPage, type DueDelivery, type RestartOutcome,
  type StoredDelivery, type StoredSubscription, type WebhookStore
} from './webhooks.ts'

// The webhook tables as the SQLite store reads and writes them. Times are milliseconds
// since the epoch. Every write goes through the store's group commit, so it shares its
// durable commit with the creates around it.

/** Submits a write to the store's group commit; resolves once it is committed. */
export type Write = <Result>(bytes: number, run: () => Result) => Promise<Result>
/** Runs a read, an unavailable file turned into StoreUnavailable; resolves once what it read is on disk. */
export type Read = <Result>(run: () => Result) => Promise<Result>

interface DueRow { id: string, payload: Buffer, attempts: bigint }

interface Claim { webhook: string, now: number, limit: number, lease: string, until: number }
interface Outcome { id: string, lease: string, code: number | null, error: string | null, now: number, at: number }

// The first subscription id among the deliveries that no subscription has: the distinct
// ids are walked one index seek each (a handful), never the deliveries themselves.
const FIRST_ORPHAN = `WITH RECURSIVE ids (id) AS (
    SELECT min(webhook_id) FROM webhook_deliveries
    UNION ALL
    SELECT (SELECT min(webhook_id) FROM webhook_deliveries WHERE webhook_id > ids.id) FROM ids WHERE ids.id IS NOT NULL)
  SELECT id FROM ids WHERE id IS NOT NULL AND id NOT IN (SELECT id FROM webhooks) LIMIT 1`

const RELEASE = 'lease = NULL, lease_until = NULL, attempts = attempts + 1, last_status_code = @code'

export class SqliteWebhooks implements WebhookStore {
  readonly #write: Write
  readonly #read: Read
  readonly #statements
  #listener = (): void => {}
  /** Set by announce inside a transaction, told once the transaction has committed. */
  #announced = false
  /**
   * Whether the transaction under way has a subscription to announce to, read by its
   * first announce: most stores have none, and a create then skips writing a payload.
   */
  #subscribed: boolean | undefined

  constructor (db: Database.Database, write: Write, read: Read) {
    this.#write = write
    this.#read = read
    // `+` before a parameter in LIMIT or equal to a non-unique index's first column
    // (`webhook_id = +?`): see the plants' statements (sqlite.ts).
    this.#statements = {
      // The delivery's id is time-ordered: see StoredDelivery.
      announce: db.prepare<[{ plant: bigint, payload: Buffer, now: number }]>(`INSERT INTO webhook_deliveries (id, webhook_id, plant_id, payload, next_attempt_at, created_at)
        SELECT 'msg_' || printf('%012x', @now) || lower(hex(randomblob(10))), id, @plant, @payload, @now, @now FROM webhooks`),
      count: db.prepare<[], { count: bigint }>('SELECT count(*) AS count FROM webhooks'),
      subscribe: db.prepare<[string, string, string, number]>('INSERT INTO webhooks (id, url, secret, created_at) VALUES (?, ?, ?, ?)'),
      subscriptions: db.prepare<[], SubscriptionRow>(`SELECT ${SUBSCRIPTION_COLUMNS} FROM webhooks ORDER BY rowid`),
      unsubscribe: db.prepare<[string]>('DELETE FROM webhooks WHERE id = ?'),
      sweep: db.prepare<[number]>(`DELETE FROM webhook_deliveries WHERE seq IN (
        SELECT seq FROM webhook_deliveries WHERE webhook_id = (${FIRST_ORPHAN}) LIMIT +?)`),
      page: db.prepare<[string, number, number], DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
        WHERE webhook_id = +? AND seq < ? ORDER BY seq DESC LIMIT +?`),
      status: db.prepare<[string, string], { status: DeliveryStatus }>('SELECT status FROM webhook_deliveries WHERE webhook_id = +? AND id = ?'),
      restart: db.prepare<[number, string]>(`UPDATE webhook_deliveries SET status = 'pending', attempts = 0, last_status_code = NULL,
        last_error = NULL, next_attempt_at = ?, delivered_at = NULL, settled_at = NULL, lease = NULL, lease_until = NULL WHERE id = ?`),
      claim: db.prepare<[Claim], DueRow>(`UPDATE webhook_deliveries SET lease = @lease, lease_until = @until
        WHERE seq IN (SELECT seq FROM webhook_deliveries WHERE webhook_id = +@webhook AND status = 'pending' AND next_attempt_at <= @now
                        AND (lease_until IS NULL OR lease_until <= @now) AND EXISTS (SELECT 1 FROM webhooks WHERE id = @webhook)
                        ORDER BY next_attempt_at LIMIT +@limit)
        RETURNING id, payload, attempts`),
      delivered: db.prepare<[Outcome]>(`UPDATE webhook_deliveries SET ${RELEASE}, status = 'delivered', last_error = NULL,
        next_attempt_at = NULL, delivered_at = @now, settled_at = @now WHERE id = @id AND lease = @lease`),
      retried: db.prepare<[Outcome]>(`UPDATE webhook_deliveries SET ${RELEASE}, last_error = @error, next_attempt_at = @at
        WHERE id = @id AND lease = @lease`),
      failed: db.prepare<[Outcome]>(`UPDATE webhook_deliveries SET ${RELEASE}, status = 'failed', last_error = @error,
        next_attempt_at = NULL, settled_at = @now WHERE id = @id AND lease = @lease`),
      release: db.prepare<[string, string]>('UPDATE webhook_deliveries SET lease = NULL, lease_until = NULL WHERE id = ? AND lease = ?'),
      // Deliveries of a deleted subscription count until swept: seconds, and the count stays an index count.
      pending: db.prepare<[], { count: bigint }>('SELECT count(*) AS count FROM webhook_deliveries WHERE status = \'pending\''),
      prune: db.prepare<[number, number]>(`DELETE FROM webhook_deliveries WHERE seq IN (
        SELECT seq FROM webhook_deliveries WHERE status <> 'pending' AND settled_at < ? LIMIT +?)`)
    }
  }

  /**
   * Writes the plant's deliveries, one per subscription: called by a create inside its
   * transaction, so they commit (or roll back) with the plant.
   */
  announce (plant: StoredPlant): void {
    this.#subscribed ??= this.#statements.count.get()!.count > 0n
    if (!this.#subscribed) return
    if (this.#statements.announce.run({ plant: plant.id, payload: announcement(plant), now: Date.now() }).changes > 0) this.#announced = true
  }

  /** Called by the store after each committed transaction. */
  committed (): void {
    this.#subscribed = undefined
    if (!this.#announced) return
    this.#announced = false
    this.#listener()
  }

  /** Called by the store after a transaction rolled back: its deliveries were never written. */
  rolledBack (): void {
    this.#subscribed = undefined
    this.#announced = false
  }

  async subscribe ({ id, url, secret, createdAt }: StoredSubscription, max: number): Promise<boolean> {
    return await this.#write(WRITE_OVERHEAD_BYTES + 2 * url.length, () => {
      if (Number(this.#statements.count.get()!.count) >= max) return false
      this.#statements.subscribe.run(id, url, secret, createdAt.getTime())
      this.#subscribed = true
      return true
    })
  }

  async subscriptions (): Promise<StoredSubscription[]> {
    return (await this.#read(() => this.#statements.subscriptions.all())).map(toSubscription)
  }

  async unsubscribe (id: string): Promise<boolean> {
    return await this.#write(WRITE_OVERHEAD_BYTES, () => this.#statements.unsubscribe.run(id).changes === 1)
  }

  async sweep (limit: number): Promise<number> {
    return await this.#write(WRITE_OVERHEAD_BYTES, () => this.#statements.sweep.run(limit).changes)
  }

  async deliveries (webhookId: string, { limit, before }: DeliveryPage): Promise<StoredDelivery[]> {
    return (await this.#read(() => this.#statements.page.all(webhookId, before ?? Number.MAX_SAFE_INTEGER, limit))).map(toDelivery)
  }

  async restart (webhookId: string, deliveryId: string): Promise<RestartOutcome> {
    return await this.#write(WRITE_OVERHEAD_BYTES, (): RestartOutcome => {
      const row = this.#statements.status.get(webhookId, deliveryId)
      if (row === undefined) return 'absent'
      if (row.status === 'pending') return 'pending'
      this.#statements.restart.run(Date.now(), deliveryId)
      this.#announced = true
      return 'restarted'
    })
  }

  async claim (webhookId: string, limit: number, leaseMs: number): Promise<DueDelivery[]> {
    const lease = randomBytes(12).toString('base64url')
    return await this.#write(WRITE_OVERHEAD_BYTES, () => {
      const now = Date.now()
      return this.#statements.claim.all({ webhook: webhookId, now, limit, lease, until: now + leaseMs })
        .map(({ id, payload, attempts }) => ({ id, payload, attempts: Number(attempts), lease }))
    })
  }

  async record ({ id, lease }: DueDelivery, { delivered, statusCode, error, retryInMs }: AttemptRecord): Promise<void> {
    await this.#write(WRITE_OVERHEAD_BYTES + 2 * (error?.length ?? 0), () => {
      const now = Date.now()
      const outcome = { id, lease, code: statusCode ?? null, error: error ?? null, now, at: now + (retryInMs ?? 0) }
      if (delivered) this.#statements.delivered.run(outcome)
      else if (retryInMs !== undefined) this.#statements.retried.run(outcome)
      else this.#statements.failed.run(outcome)
    })
  }

  async release (deliveries: DueDelivery[]): Promise<void> {
    await this.#write(WRITE_OVERHEAD_BYTES * deliveries.length, () => {
      for (const { id, lease } of deliveries) this.#statements.release.run(id, lease)
    })
  }

  async pending (): Promise<number> {
    return Number((await this.#read(() => this.#statements.pending.get()))!.count)
  }

  async prune (settledBefore: Date, limit: number): Promise<number> {
    return await this.#write(WRITE_OVERHEAD_BYTES, () => this.#statements.prune.run(settledBefore.getTime(), limit).changes)
  }

  onAnnounced (listener: () => void): void {
    this.#listener = listener
  }
}
