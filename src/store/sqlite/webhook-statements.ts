import type Database from 'better-sqlite3'
import type { DeliveryStatus } from '../../../schemas/webhook.ts'
import { erasedSql, eventBitSql, keptPayloadSql, PLANT_DELETED } from '../webhooks.ts'
import { DELIVERY_COLUMNS, SUBSCRIPTION_COLUMNS, type DeliveryRow, type SubscriptionRow } from '../webhook-rows.ts'

// The SQLite webhook store's statements, and the chunks of replays and erasures they make
// up. `+` before a parameter in LIMIT or equal to a non-unique index's first column
// (`webhook_id = +?`): see the plants' statements (store.ts).

export interface DueRow { id: string, payload: Buffer | null, attempts: bigint, trace_context: string | null }
export interface Claim { webhook: string, now: number, limit: number, lease: string, until: number }
export interface Outcome { id: string, lease: string, code: number | null, error: string | null, now: number, at: number }
interface Announce { plant: bigint, event: number | bigint, now: number, bit: number }
interface Replay { webhook: string, from: number | bigint, limit: number, now: number }
interface Chunk { after: number, limit: number, before: number }
interface ReplayState { replay_from: bigint, pending: bigint }
interface Erasure { plant_id: bigint, before_seq: bigint, erased_through: bigint }

// The first subscription id among the deliveries that no subscription has: the distinct
// ids are walked one index seek each (a handful), never the deliveries themselves.
const FIRST_ORPHAN = `WITH RECURSIVE ids (id) AS (
    SELECT min(webhook_id) FROM webhook_deliveries
    UNION ALL
    SELECT (SELECT min(webhook_id) FROM webhook_deliveries WHERE webhook_id > ids.id) FROM ids WHERE ids.id IS NOT NULL)
  SELECT id FROM ids WHERE id IS NOT NULL AND id NOT IN (SELECT id FROM webhooks) LIMIT 1`

const RELEASE = 'lease = NULL, lease_until = NULL, attempts = attempts + 1, last_status_code = @code'
// The delivery's id is time-ordered: see StoredDelivery.
const NEW_ID = "'msg_' || printf('%012x', @now) || lower(hex(randomblob(10)))"

/** The statements, prepared once per connection. */
export type WebhookStatements = ReturnType<typeof prepareWebhooks>

export function prepareWebhooks (db: Database.Database) {
  return {
    event: db.prepare<[bigint, string, Buffer, number, string | null]>('INSERT INTO webhook_events (plant_id, type, payload, created_at, trace_context) VALUES (?, ?, ?, ?, ?)'),
    // Only the subscriptions choosing the event (its bit): how many, and each of them.
    wanted: db.prepare<[number], { count: bigint }>('SELECT count(*) AS count FROM webhooks WHERE events & ? <> 0'),
    // Those at the bound miss this event; one whose replay is under way gets it from the
    // replay, which never passes the bound.
    disable: db.prepare<[{ max: number, event: number | bigint, now: number, bit: number }]>(`UPDATE webhooks SET disabled_at = @now,
      missed_since = coalesce(missed_since, @now), missed_from = @event
      WHERE disabled_at IS NULL AND replay_from IS NULL AND pending >= @max AND events & @bit <> 0`),
    // A delivery's own payload column is left empty: the payload is its event's. A
    // subscription whose replay is under way gets the event from the replay, in its order.
    announce: db.prepare<[Announce]>(`INSERT INTO webhook_deliveries (id, webhook_id, plant_id, event_seq, payload, next_attempt_at, created_at)
      SELECT ${NEW_ID}, id, @plant, @event, X'', @now, @now FROM webhooks WHERE disabled_at IS NULL AND replay_from IS NULL AND events & @bit <> 0`),
    announced: db.prepare<[number]>('UPDATE webhooks SET pending = pending + 1 WHERE disabled_at IS NULL AND replay_from IS NULL AND events & ? <> 0'),
    settled: db.prepare<[string]>('UPDATE webhooks SET pending = pending - 1 WHERE id = ?'),
    unsettled: db.prepare<[string]>('UPDATE webhooks SET pending = pending + 1 WHERE id = ?'),
    count: db.prepare<[], { count: bigint }>('SELECT count(*) AS count FROM webhooks'),
    subscribe: db.prepare<[string, string, string, number, number]>('INSERT INTO webhooks (id, url, secret, events, created_at) VALUES (?, ?, ?, ?, ?)'),
    subscriptions: db.prepare<[], SubscriptionRow>(`SELECT ${SUBSCRIPTION_COLUMNS} FROM webhooks ORDER BY rowid`),
    unsubscribe: db.prepare<[string]>('DELETE FROM webhooks WHERE id = ?'),
    orphan: db.prepare<[], { id: string }>(FIRST_ORPHAN),
    sweep: db.prepare<[number]>(`DELETE FROM webhook_deliveries WHERE seq IN (
      SELECT seq FROM webhook_deliveries WHERE webhook_id = (${FIRST_ORPHAN}) LIMIT +?)`),
    page: db.prepare<[string, number, number], DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
      WHERE webhook_id = +? AND seq < ? ORDER BY seq DESC LIMIT +?`),
    status: db.prepare<[string, string], { status: DeliveryStatus, erased: bigint }>(`SELECT status,
      (SELECT ${erasedSql('webhook_events')} FROM webhook_events WHERE seq = event_seq) AS erased FROM webhook_deliveries WHERE webhook_id = +? AND id = ?`),
    restart: db.prepare<[number, string]>(`UPDATE webhook_deliveries SET status = 'pending', attempts = 0, last_status_code = NULL,
      last_error = NULL, next_attempt_at = ?, delivered_at = NULL, settled_at = NULL, lease = NULL, lease_until = NULL WHERE id = ?`),
    // A plant's events go in order: none while an earlier event of the plant is pending for the subscription.
    claim: db.prepare<[Claim], DueRow>(`UPDATE webhook_deliveries SET lease = @lease, lease_until = @until
      WHERE seq IN (SELECT due.seq FROM webhook_deliveries AS due WHERE due.webhook_id = +@webhook AND due.status = 'pending'
                      AND due.next_attempt_at <= @now AND (due.lease_until IS NULL OR due.lease_until <= @now)
                      AND EXISTS (SELECT 1 FROM webhooks WHERE id = @webhook)
                      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries AS earlier WHERE earlier.webhook_id = due.webhook_id
                        AND earlier.plant_id = due.plant_id AND earlier.status = 'pending' AND earlier.event_seq < due.event_seq)
                      ORDER BY due.next_attempt_at LIMIT +@limit)
      RETURNING id, (SELECT ${keptPayloadSql('webhook_events')} FROM webhook_events WHERE webhook_events.seq = event_seq) AS payload, attempts,
        (SELECT trace_context FROM webhook_events WHERE webhook_events.seq = event_seq) AS trace_context`),
    delivered: db.prepare<[Outcome], { webhook_id: string }>(`UPDATE webhook_deliveries SET ${RELEASE}, status = 'delivered', last_error = NULL,
      next_attempt_at = NULL, delivered_at = @now, settled_at = @now WHERE id = @id AND lease = @lease RETURNING webhook_id`),
    retried: db.prepare<[Outcome]>(`UPDATE webhook_deliveries SET ${RELEASE}, last_error = @error, next_attempt_at = @at
      WHERE id = @id AND lease = @lease`),
    failed: db.prepare<[Outcome], { webhook_id: string }>(`UPDATE webhook_deliveries SET ${RELEASE}, status = 'failed', last_error = @error,
      next_attempt_at = NULL, settled_at = @now WHERE id = @id AND lease = @lease RETURNING webhook_id`),
    release: db.prepare<[string, string]>('UPDATE webhook_deliveries SET lease = NULL, lease_until = NULL WHERE id = ? AND lease = ?'),
    pending: db.prepare<[], { count: bigint }>('SELECT coalesce(sum(pending), 0) AS count FROM webhooks'),
    settledBefore: db.prepare<[number], { seq: bigint }>('SELECT seq FROM webhook_deliveries WHERE status <> \'pending\' AND settled_at < ? LIMIT 1'),
    prune: db.prepare<[number, number]>(`DELETE FROM webhook_deliveries WHERE seq IN (
      SELECT seq FROM webhook_deliveries WHERE status <> 'pending' AND settled_at < ? LIMIT +?)`),
    // A deleted plant's earlier events wait for their erasure (see erasedSql), done a chunk
    // at a time: each payload erased, its deliveries still pending failed.
    erasing: db.prepare<[bigint, number | bigint]>('INSERT INTO plant_erasures (plant_id, before_seq) VALUES (?, ?)'),
    erasure: db.prepare<[], Erasure>('SELECT plant_id, before_seq, erased_through FROM plant_erasures LIMIT 1'),
    erasureChunk: db.prepare<[{ plant: bigint, after: bigint, before: bigint, limit: number }], bigint>(`SELECT seq FROM webhook_events
      WHERE plant_id = +@plant AND seq > @after AND seq < @before ORDER BY seq LIMIT +@limit`).pluck(),
    erase: db.prepare<[bigint]>('UPDATE webhook_events SET payload = NULL WHERE seq = ? AND payload IS NOT NULL'),
    erased: db.prepare<[{ event: bigint, now: number }], { webhook_id: string }>(`UPDATE webhook_deliveries SET status = 'failed',
      last_error = '${PLANT_DELETED}', next_attempt_at = NULL, settled_at = @now, lease = NULL, lease_until = NULL
      WHERE event_seq = +@event AND status = 'pending' RETURNING webhook_id`),
    erasedThrough: db.prepare<[bigint, bigint, bigint]>('UPDATE plant_erasures SET erased_through = ? WHERE plant_id = ? AND before_seq = ?'),
    erasureDone: db.prepare<[bigint, bigint]>('DELETE FROM plant_erasures WHERE plant_id = ? AND before_seq = ?'),
    exists: db.prepare<[string], { id: string }>('SELECT id FROM webhooks WHERE id = ?'),
    // A replay queues the events from missed_from on, until caught up: live ones wait for it.
    enable: db.prepare<[string]>(`UPDATE webhooks SET disabled_at = NULL, replay_from = missed_from, missed_from = NULL, replay_to = NULL
      WHERE id = ? AND disabled_at IS NOT NULL`),
    replayState: db.prepare<[string], ReplayState>(`SELECT replay_from, pending FROM webhooks
      WHERE id = ? AND disabled_at IS NULL AND replay_from IS NOT NULL`),
    replayChunk: db.prepare<[{ from: number | bigint, limit: number }], { examined: bigint, last: bigint | null }>(`SELECT count(*) AS examined, max(seq) AS last
      FROM (SELECT seq FROM webhook_events WHERE seq >= @from ORDER BY seq LIMIT +@limit)`),
    // Of the chunk, the events it chose, kept, and not queued for it already (live, before an earlier disable).
    replay: db.prepare<[Replay], { event_seq: bigint }>(`INSERT INTO webhook_deliveries (id, webhook_id, plant_id, event_seq, payload, next_attempt_at, created_at)
      SELECT ${NEW_ID}, @webhook, chunk.plant_id, chunk.seq, X'', @now, @now
      FROM (SELECT seq, plant_id, type, payload FROM webhook_events WHERE seq >= @from ORDER BY seq LIMIT +@limit) AS chunk
      WHERE NOT ${erasedSql('chunk')} AND (SELECT events FROM webhooks WHERE id = @webhook) & (${eventBitSql('chunk.type')}) <> 0
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries AS queued WHERE queued.event_seq = chunk.seq AND queued.webhook_id = +@webhook)
      ORDER BY chunk.seq RETURNING event_seq`),
    replayed: db.prepare<[{ webhook: string, count: number, next: number | bigint | null }]>(`UPDATE webhooks SET pending = pending + @count,
      replay_from = @next, missed_since = CASE WHEN @next IS NULL THEN NULL ELSE missed_since END WHERE id = @webhook`),
    // A chunk of events in seq order, whatever they are: no statement reads more rows than `limit`.
    eventChunk: db.prepare<[Chunk], { examined: bigint, last: bigint | null, oldest: bigint | null, newest: bigint | null }>(`SELECT count(*) AS examined,
      max(seq) AS last, min(created_at) AS oldest, max(created_at) AS newest FROM (SELECT seq, created_at FROM webhook_events WHERE seq > @after ORDER BY seq LIMIT +@limit)`),
    pruneEvents: db.prepare<[Chunk], { seq: bigint }>(`DELETE FROM webhook_events WHERE seq IN (
      SELECT seq FROM (SELECT seq, created_at FROM webhook_events WHERE seq > @after ORDER BY seq LIMIT +@limit) AS chunk
      WHERE created_at < @before AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_seq = chunk.seq)) RETURNING seq`),
    // The change feed's horizon: a cursor before the last seq pruned has lost events.
    horizon: db.prepare<[bigint]>('UPDATE event_horizon SET pruned_through = max(pruned_through, ?)')
  }
}

/**
 * Queues the next chunk of a subscription's replay, in the writer's transaction: `limit`
 * events looked at from replay_from, within `max` pending; how many it queued, and looked at.
 */
export function replayChunk (statements: WebhookStatements, id: string, limit: number, max: number): { queued: number, examined: number } {
  const state = statements.replayState.get(id)
  if (state === undefined) return { queued: 0, examined: 0 }
  const room = Math.min(limit, max - Number(state.pending))
  if (room <= 0) return { queued: 0, examined: 0 }
  const from = state.replay_from
  const { examined, last } = statements.replayChunk.get({ from, limit: room })!
  const queued = statements.replay.all({ webhook: id, from, limit: room, now: Date.now() })
  // A chunk short of what it looked for reached the newest event: the replay is done, and
  // the next event is announced live (one writer: none can commit in between).
  const next = Number(examined) < room ? null : last! + 1n
  statements.replayed.run({ webhook: id, count: queued.length, next })
  return { queued: queued.length, examined: Number(examined) }
}

/**
 * Erases deleted plants' events before their deletion, in the writer's transaction: each
 * payload erased, its deliveries still pending failed. Plants of short histories share a
 * chunk: `limit` events (or plants) in all. Returns whether more may wait.
 */
export function eraseChunk (statements: WebhookStatements, limit: number): boolean {
  const now = Date.now()
  for (let budget = limit; budget > 0;) {
    const erasure = statements.erasure.get()
    if (erasure === undefined) return false
    const { plant_id: plant, before_seq: before, erased_through: after } = erasure
    const chunk = statements.erasureChunk.all({ plant, after, before, limit: budget })
    for (const seq of chunk) {
      if (statements.erase.run(seq).changes === 0) continue
      for (const { webhook_id: webhook } of statements.erased.all({ event: seq, now })) statements.settled.run(webhook)
    }
    if (chunk.length < budget) statements.erasureDone.run(plant, before)
    else statements.erasedThrough.run(chunk[chunk.length - 1], plant, before)
    budget -= Math.max(chunk.length, 1)
  }
  return true
}
