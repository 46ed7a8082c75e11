import { randomBytes } from 'node:crypto'
import type { DeliveryStatus } from '../../../schemas/webhook.ts'
import type { KeyClaim, KeyOutcome, KeyRequest, SubscribeOutcome } from '../idempotency-keys.ts'
import { Commit, type Commits } from '../commits.ts'
import { eraseChunk } from './erasure.ts'
import type { Query, Script } from './pool.ts'
import { replayChunk } from './replay.ts'
import { claimOutcome, claimScript, PRUNE_KEYS, RELEASE_KEY, subscribeOutcome, subscribeScript } from './subscribe.ts'
import { DELIVERY_COLUMNS, SUBSCRIPTION_COLUMNS, toDelivery, toSubscription, type DeliveryRow, type SubscriptionRow } from '../webhook-rows.ts'
import {
  DEFAULT_MAX_PENDING, dueDelivery, erasedSql, keptPayloadSql, PLANT_DELETED,
  type AttemptRecord, type DeliveryPage, type DueDelivery, type RestartOutcome, type StoredDelivery, type StoredSubscription, type WebhookStore
} from '../webhooks.ts'

// The webhook tables as the PostgreSQL store reads and writes them. Every statement
// commits on its own; times come from the database's clock, which every instance shares.
// A change's deliveries are written by its own statement (see writes.ts).

// A delivery whose subscription is gone (see unsubscribe) is never claimed nor counted.
const SUBSCRIBED = 'EXISTS (SELECT 1 FROM webhooks WHERE webhooks.id = webhook_deliveries.webhook_id)'

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
// until it expires, which is how another instance takes over from one that died. A
// plant's events go in order: none while an earlier event of the plant is pending for it.
const CLAIM = `UPDATE webhook_deliveries SET lease = $4, lease_until = now() + $3 * interval '1 millisecond'
  WHERE seq IN (
    SELECT seq FROM webhook_deliveries
    WHERE webhook_id = $1 AND status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until <= now())
      AND ${SUBSCRIBED} AND NOT EXISTS (SELECT 1 FROM webhook_deliveries AS earlier WHERE earlier.webhook_id = webhook_deliveries.webhook_id
        AND earlier.plant_id = webhook_deliveries.plant_id AND earlier.status = 'pending' AND earlier.event_seq < webhook_deliveries.event_seq)
    ORDER BY next_attempt_at LIMIT $2
    FOR UPDATE SKIP LOCKED)
  RETURNING id, (SELECT ${keptPayloadSql('webhook_events')} FROM webhook_events WHERE webhook_events.seq = event_seq) AS payload, attempts,
    (SELECT trace_context FROM webhook_events WHERE webhook_events.seq = event_seq) AS trace_context`

// A delivery settled is one pending the fewer for its subscription.
const SETTLED = (update: string): string => `WITH settled AS (${update} RETURNING webhook_id)
  UPDATE webhooks SET pending = webhooks.pending - 1 FROM settled WHERE webhooks.id = settled.webhook_id`
const RELEASE = 'lease = NULL, lease_until = NULL, attempts = attempts + 1, last_status_code = $3'
const DELIVERED = SETTLED(`UPDATE webhook_deliveries SET ${RELEASE}, status = 'delivered', last_error = NULL, next_attempt_at = NULL,
  delivered_at = now(), settled_at = now() WHERE id = $1 AND lease = $2`)
const RETRIED = `UPDATE webhook_deliveries SET ${RELEASE}, last_error = $4, next_attempt_at = now() + $5 * interval '1 millisecond'
  WHERE id = $1 AND lease = $2`
const FAILED = SETTLED(`UPDATE webhook_deliveries SET ${RELEASE}, status = 'failed', last_error = $4, next_attempt_at = NULL, settled_at = now()
  WHERE id = $1 AND lease = $2`)

const ENABLE = `WITH target AS (SELECT id FROM webhooks WHERE id = $1),
  enabled AS (
    UPDATE webhooks SET disabled_at = NULL, replay_from = missed_from, missed_from = NULL, replay_to = NULL
    WHERE id = $1 AND disabled_at IS NOT NULL)
  SELECT count(*)::int AS found FROM target`

// A chunk of events in seq order, whatever they are: no statement reads more rows than the limit.
const PRUNE_EVENTS = `WITH chunk AS (SELECT seq, created_at FROM webhook_events WHERE seq > $2 ORDER BY seq LIMIT $3),
  pruned AS (
    DELETE FROM webhook_events WHERE seq IN (SELECT seq FROM chunk WHERE created_at < $1
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE webhook_deliveries.event_seq = chunk.seq)) RETURNING seq),
  horizon AS (UPDATE event_horizon SET pruned_through = greatest(pruned_through, (SELECT max(seq) FROM pruned)) WHERE EXISTS (SELECT 1 FROM pruned))
  SELECT count(*)::int AS examined, max(seq)::text AS last, coalesce(max(created_at) < $1, false) AS old FROM chunk`

const RELEASE_LEASES = `UPDATE webhook_deliveries SET lease = NULL, lease_until = NULL
  FROM unnest($1::text[], $2::text[]) AS released (id, lease)
  WHERE webhook_deliveries.id = released.id AND webhook_deliveries.lease = released.lease`

// Which delivery it was, and whether it was pending before this statement changed it.
// Erased: its plant was deleted (or its event, no longer kept, pruned): nothing to send.
const RESTART = `WITH target AS (SELECT seq, status, event_seq FROM webhook_deliveries WHERE webhook_id = $1 AND id = $2 FOR UPDATE),
  kept AS (
    SELECT target.seq, target.status, coalesce((SELECT ${erasedSql('webhook_events')} FROM webhook_events WHERE webhook_events.seq = target.event_seq), true) AS erased
    FROM target),
  restarted AS (
    UPDATE webhook_deliveries SET status = 'pending', attempts = 0, last_status_code = NULL, last_error = NULL,
      next_attempt_at = now(), delivered_at = NULL, settled_at = NULL, lease = NULL, lease_until = NULL
    WHERE seq = (SELECT seq FROM kept WHERE status <> 'pending' AND NOT erased) RETURNING webhook_id),
  counted AS (UPDATE webhooks SET pending = webhooks.pending + 1 FROM restarted WHERE webhooks.id = restarted.webhook_id)
  SELECT status, erased FROM kept`

export class PostgresWebhooks implements WebhookStore {
  readonly #query: Query
  readonly #script: Script
  readonly #commits: Commits
  /** The bound of a subscription's pending deliveries, read by each create statement. */
  maxPending = DEFAULT_MAX_PENDING

  constructor (query: Query, script: Script, commits: Commits) {
    this.#query = query
    this.#script = script
    this.#commits = commits
  }

  async subscribe (subscription: StoredSubscription, max: number, claim?: KeyClaim): Promise<SubscribeOutcome> {
    const outcome = subscribeOutcome(await this.#script(subscribeScript(subscription, max, claim)))
    if (outcome === 'subscribed') this.#told({ subscriptions: 1 })
    return outcome
  }

  async claimKey (request: KeyRequest): Promise<KeyOutcome> {
    const lease = randomBytes(12).toString('base64url')
    return claimOutcome(await this.#script(claimScript(request, lease)), request, lease)
  }

  async releaseKey ({ scope, key, lease }: KeyClaim): Promise<void> {
    await this.#query(RELEASE_KEY, [scope, key, lease])
  }

  async pruneKeys (limit: number): Promise<number> {
    return (await this.#query(PRUNE_KEYS, [limit])).rowCount ?? 0
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
    const deleted = (await this.#query('DELETE FROM webhooks WHERE id = $1', [id])).rowCount === 1
    if (deleted) this.#told({ subscriptions: 1 })
    return deleted
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
    const [row] = (await this.#query<{ status: DeliveryStatus, erased: boolean }>(RESTART, [webhookId, deliveryId])).rows
    if (row === undefined) return 'absent'
    if (row.status === 'pending') return 'pending'
    if (row.erased) return 'erased'
    this.#told({ deliveries: 1 })
    return 'restarted'
  }

  async claim (webhookId: string, limit: number, leaseMs: number): Promise<DueDelivery[]> {
    const lease = randomBytes(12).toString('base64url')
    const { rows } = await this.#query<{ id: string, payload: Buffer | null, attempts: number, trace_context: string | null }>(CLAIM, [webhookId, limit, leaseMs, lease])
    const due: DueDelivery[] = []
    for (const { id, payload, attempts, trace_context: traceContext } of rows) {
      if (payload !== null) due.push(dueDelivery(id, payload, attempts, lease, traceContext))
      else await this.record({ id, payload: Buffer.alloc(0), attempts, lease }, { delivered: false, error: PLANT_DELETED })
    }
    return due
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
    const { rows } = await this.#query<{ count: number }>('SELECT coalesce(sum(pending), 0)::int AS count FROM webhooks')
    return rows[0].count
  }

  async prune (settledBefore: Date, limit: number): Promise<number> {
    return (await this.#query(PRUNE, [settledBefore, limit])).rowCount ?? 0
  }

  limitPending (max: number): void {
    this.maxPending = max
  }

  async enable (id: string): Promise<boolean> {
    const found = (await this.#query<{ found: number }>(ENABLE, [id])).rows[0].found === 1
    if (found) this.#told({ subscriptions: 1 })
    return found
  }

  async replay (id: string, limit: number): Promise<number> {
    const { queued, examined } = await replayChunk(this.#query, this.#script, id, limit, this.maxPending)
    this.#told({ deliveries: queued })
    return examined
  }

  async erase (limit: number): Promise<boolean> {
    return await eraseChunk(this.#script, limit)
  }

  async pruneEvents (createdBefore: Date, after: number, limit: number): Promise<number | undefined> {
    const [{ examined, last, old }] = (await this.#query<{ examined: number, last: string | null, old: boolean }>(PRUNE_EVENTS, [createdBefore, after, limit])).rows
    return examined === limit && old ? Number(last) : undefined
  }

  /** Tells the store's listeners of a statement that committed on its own. */
  #told (news: Partial<Commit>): void {
    this.#commits.tell(Object.assign(new Commit(), news))
  }
}
