import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { DeliveryStatus } from '../../schemas/webhook.ts'
import type { Query } from './postgres-plants.ts'
import type { Script } from './postgres-pool.ts'
import { DELIVERY_COLUMNS, SUBSCRIPTION_COLUMNS, toDelivery, toSubscription, type DeliveryRow, type SubscriptionRow } from './webhook-rows.ts'
import type {
  AttemptRecord, DeliveryPage, DueDelivery, RestartOutcome, StoredDelivery, StoredSubscription, WebhookStore
} from './webhooks.ts'

// The webhook tables as the PostgreSQL store reads and writes them. Every statement
// commits on its own; times come from the database's clock, which every instance shares.
// A create's deliveries are written by its own statement (see postgres-plants.ts).

// A delivery whose subscription is gone (see unsubscribe) is never claimed nor counted.
const SUBSCRIBED = 'EXISTS (SELECT 1 FROM webhooks WHERE webhooks.id = webhook_deliveries.webhook_id)'

// The count and the insert run after the lock (any fixed number, the same in every
// instance): subscribes take turns, across instances, and the limit holds. Sent together,
// one implicit transaction holding the lock for one round trip; in READ COMMITTED the
// INSERT, begun once the lock is taken, counts what every subscribe before it committed.
const SUBSCRIBE_LOCK = '7140531842950291128'

/** The subscribe script, its values escaped by pg: a script's statements take no parameters. */
function subscribeScript ({ id, url, secret, createdAt }: StoredSubscription, max: number): string {
  const [idText, urlText, secretText, createdText] = [id, url, secret, createdAt.toISOString()].map((value) => pg.escapeLiteral(value))
  return `SELECT pg_advisory_xact_lock(${SUBSCRIBE_LOCK});
    INSERT INTO webhooks (id, url, secret, created_at) SELECT ${idText}, ${urlText}, ${secretText}, ${createdText}::timestamptz
    WHERE (SELECT count(*) FROM webhooks) < ${Math.trunc(max)}`
}

// The deliveries, a chunk at a time, of the first subscription id among them that no
// subscription has: the distinct ids are walked one index seek each (a handful), never the
// deliveries themselves. SKIP LOCKED: instances sweeping at once take different rows.
const SWEEP = `WITH RECURSIVE ids (id) AS (
    (SELECT webhook_id FROM webhook_deliveries ORDER BY webhook_id LIMIT 1)
    UNION ALL
    SELECT (SELECT webhook_id FROM webhook_deliveries WHERE webhook_id > ids.id ORDER BY webhook_id LIMIT 1) FROM ids WHERE ids.id IS NOT NULL
  ), orphan AS (
    SELECT id FROM ids WHERE id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM webhooks WHERE webhooks.id = ids.id) LIMIT 1
  )
  DELETE FROM webhook_deliveries WHERE seq IN (
    SELECT seq FROM webhook_deliveries WHERE webhook_id = (SELECT id FROM orphan) LIMIT $1 FOR UPDATE SKIP LOCKED)`

const PRUNE = `DELETE FROM webhook_deliveries WHERE seq IN (
  SELECT seq FROM webhook_deliveries WHERE status <> 'pending' AND settled_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`

// FOR UPDATE SKIP LOCKED: instances claiming at the same moment take different rows
// instead of waiting for each other; the lease then keeps a row from being claimed again
// until it expires, which is how another instance takes over from one that died.
const CLAIM = `UPDATE webhook_deliveries SET lease = $4, lease_until = now() + $3 * interval '1 millisecond'
  WHERE seq IN (
    SELECT seq FROM webhook_deliveries
    WHERE webhook_id = $1 AND status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until <= now())
      AND ${SUBSCRIBED}
    ORDER BY next_attempt_at LIMIT $2
    FOR UPDATE SKIP LOCKED)
  RETURNING id, payload, attempts`

const RELEASE = 'lease = NULL, lease_until = NULL, attempts = attempts + 1, last_status_code = $3'
const DELIVERED = `UPDATE webhook_deliveries SET ${RELEASE}, status = 'delivered', last_error = NULL, next_attempt_at = NULL,
  delivered_at = now(), settled_at = now() WHERE id = $1 AND lease = $2`
const RETRIED = `UPDATE webhook_deliveries SET ${RELEASE}, last_error = $4, next_attempt_at = now() + $5 * interval '1 millisecond'
  WHERE id = $1 AND lease = $2`
const FAILED = `UPDATE webhook_deliveries SET ${RELEASE}, status = 'failed', last_error = $4, next_attempt_at = NULL, settled_at = now()
  WHERE id = $1 AND lease = $2`

const RELEASE_LEASES = `UPDATE webhook_deliveries SET lease = NULL, lease_until = NULL
  FROM unnest($1::text[], $2::text[]) AS released (id, lease)
  WHERE webhook_deliveries.id = released.id AND webhook_deliveries.lease = released.lease`

// Which delivery it was, and whether it was pending before this statement changed it.
const RESTART = `WITH target AS (SELECT seq, status FROM webhook_deliveries WHERE webhook_id = $1 AND id = $2 FOR UPDATE),
  restarted AS (
    UPDATE webhook_deliveries SET status = 'pending', attempts = 0, last_status_code = NULL, last_error = NULL,
      next_attempt_at = now(), delivered_at = NULL, settled_at = NULL, lease = NULL, lease_until = NULL
    WHERE seq = (SELECT seq FROM target WHERE status <> 'pending'))
  SELECT status FROM target`

export class PostgresWebhooks implements WebhookStore {
  readonly #query: Query
  readonly #script: Script
  #listener = (): void => {}

  constructor (query: Query, script: Script) {
    this.#query = query
    this.#script = script
  }

  /** Called by the store after a create statement that inserted plants has committed. */
  committed (): void {
    this.#listener()
  }

  async subscribe (subscription: StoredSubscription, max: number): Promise<boolean> {
    const [, inserted] = await this.#script(subscribeScript(subscription, max))
    return inserted.rowCount === 1
  }

  async subscriptions (): Promise<StoredSubscription[]> {
    const { rows } = await this.#query<SubscriptionRow>(`SELECT ${SUBSCRIPTION_COLUMNS} FROM webhooks ORDER BY seq`)
    return rows.map(toSubscription)
  }

  /**
   * Waits for the creates announcing to the subscription (they lock it) to commit; their
   * deliveries, as any left without a subscription, are then deleted by sweep.
   */
  async unsubscribe (id: string): Promise<boolean> {
    return (await this.#query('DELETE FROM webhooks WHERE id = $1', [id])).rowCount === 1
  }

  async sweep (limit: number): Promise<number> {
    return (await this.#query(SWEEP, [limit])).rowCount ?? 0
  }

  async deliveries (webhookId: string, { limit, before }: DeliveryPage): Promise<StoredDelivery[]> {
    const { rows } = await this.#query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
      WHERE webhook_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`, [webhookId, before ?? Number.MAX_SAFE_INTEGER, limit])
    return rows.map(toDelivery)
  }

  async restart (webhookId: string, deliveryId: string): Promise<RestartOutcome> {
    const [row] = (await this.#query<{ status: DeliveryStatus }>(RESTART, [webhookId, deliveryId])).rows
    if (row === undefined) return 'absent'
    if (row.status === 'pending') return 'pending'
    this.#listener()
    return 'restarted'
  }

  async claim (webhookId: string, limit: number, leaseMs: number): Promise<DueDelivery[]> {
    const lease = randomBytes(12).toString('base64url')
    const { rows } = await this.#query<{ id: string, payload: Buffer, attempts: number }>(CLAIM, [webhookId, limit, leaseMs, lease])
    return rows.map(({ id, payload, attempts }) => ({ id, payload, attempts, lease }))
  }

  async record ({ id, lease }: DueDelivery, { delivered, statusCode, error, retryInMs }: AttemptRecord): Promise<void> {
    const code = statusCode ?? null
    if (delivered) await this.#query(DELIVERED, [id, lease, code])
    else if (retryInMs !== undefined) await this.#query(RETRIED, [id, lease, code, error ?? null, retryInMs])
    else await this.#query(FAILED, [id, lease, code, error ?? null])
  }

  async release (deliveries: DueDelivery[]): Promise<void> {
    await this.#query(RELEASE_LEASES, [deliveries.map((d) => d.id), deliveries.map((d) => d.lease)])
  }

  async pending (): Promise<number> {
    const { rows } = await this.#query<{ count: number }>(`SELECT count(*)::int AS count FROM webhook_deliveries
      WHERE status = 'pending' AND ${SUBSCRIBED}`)
    return rows[0].count
  }

  async prune (settledBefore: Date, limit: number): Promise<number> {
    return (await this.#query(PRUNE, [settledBefore, limit])).rowCount ?? 0
  }

  onAnnounced (listener: () => void): void {
    this.#listener = listener
  }
}
