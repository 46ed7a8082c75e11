import pg from 'pg'
import type { EventType } from '../../schemas/webhook.ts'
import { SELECT_PLANTS, toPlant, utf8, type Query, type Row } from './postgres-plants.ts'
import type { Script } from './postgres-pool.ts'
import { EVENTS_LOCK } from './postgres-changes.ts'
import { NEW_DELIVERY_ID } from './postgres-webhooks.ts'
import type { StoredPlant } from './store.ts'
import { deletedAnnouncement, eventBit, PLANT_DELETED } from './webhooks.ts'

// The events of a plant's updates (see postgres-updates.ts) and its delete, each written in
// the transaction of its change, after EVENTS_LOCK (see postgres-changes.ts). A delete
// writes only while the plant is still the one read (compare and set), so two instances
// cannot both act on one state: the one that finds it changed reads it again.

/**
 * The CTEs that announce the events of `source` (columns plant_id, payload, ord): each
 * payload once, in ord order, and a delivery of each to every enabled subscription choosing
 * the type that stays within `max` pending; one the events would take past it is disabled
 * instead, their first its first missed. The subscriptions are locked in id order, as a
 * create's are (see postgres-plants.ts).
 */
export function announcing (source: string, type: EventType, max: string): string {
  return `subscribers AS (
    SELECT id, pending, disabled_at FROM webhooks WHERE events & ${eventBit(type)} <> 0 AND EXISTS (SELECT 1 FROM ${source}) ORDER BY id FOR NO KEY UPDATE
  ), events AS (
    INSERT INTO webhook_events (plant_id, type, payload)
    SELECT plant_id, '${type}', payload FROM ${source} ORDER BY ord RETURNING seq, plant_id
  ), counted AS (
    SELECT count(*) AS n, min(seq) AS first FROM events
  ), open AS (
    SELECT subscribers.id FROM subscribers, counted
    WHERE counted.n > 0 AND subscribers.disabled_at IS NULL AND subscribers.pending + counted.n <= ${max}
  ), announced AS (
    INSERT INTO webhook_deliveries (id, webhook_id, plant_id, event_seq, next_attempt_at)
    SELECT ${NEW_DELIVERY_ID}, open.id, events.plant_id, events.seq, now() FROM events CROSS JOIN open
  ), opened AS (
    UPDATE webhooks SET pending = webhooks.pending + counted.n FROM open, counted WHERE webhooks.id = open.id
  ), disabled AS (
    UPDATE webhooks SET disabled_at = now(), missed_since = coalesce(webhooks.missed_since, now()),
      missed_from = coalesce(webhooks.replay_from, counted.first), replay_from = NULL, replay_to = NULL
    FROM subscribers, counted
    WHERE webhooks.id = subscribers.id AND counted.n > 0 AND subscribers.disabled_at IS NULL AND subscribers.pending + counted.n > ${max}
  )`
}

/**
 * Deletes a plant if it is still `plant`, then announces the deletion, in one transaction
 * (two statements: each would otherwise update a subscription's count twice). The delete
 * erases the plant's earlier payloads and fails their pending deliveries.
 */
function deleteScript (plant: StoredPlant, maxPending: number): string {
  // Quoted: a bare -9223372036854775808::bigint casts 9223372036854775808 first, out of range.
  const id = `'${plant.id}'::bigint`
  return `SELECT pg_advisory_xact_lock(${EVENTS_LOCK});
    WITH gone AS (
      DELETE FROM plants WHERE id = ${id} AND name = ${literal(utf8(plant.name))} AND tag IS NOT DISTINCT FROM ${literal(bytes(plant.tag))}
      RETURNING id),
    erased AS (UPDATE webhook_events SET payload = NULL WHERE plant_id IN (SELECT id FROM gone) AND payload IS NOT NULL RETURNING seq),
    failed AS (
      UPDATE webhook_deliveries SET status = 'failed', last_error = '${PLANT_DELETED}', next_attempt_at = NULL, settled_at = now(),
        lease = NULL, lease_until = NULL
      WHERE event_seq IN (SELECT seq FROM erased) AND status = 'pending' RETURNING webhook_id),
    counted AS (
      UPDATE webhooks SET pending = webhooks.pending - failed_per.n
      FROM (SELECT webhook_id, count(*) AS n FROM failed GROUP BY webhook_id) AS failed_per WHERE webhooks.id = failed_per.webhook_id)
    SELECT set_config('plant_store.deleted', count(*)::text, true)::int AS deleted FROM gone;
  WITH gone AS (SELECT ${id} AS plant_id, ${literal(deletedAnnouncement(plant))} AS payload, 1 AS ord WHERE current_setting('plant_store.deleted') = '1'),
    ${announcing('gone', 'plant.deleted', String(Math.trunc(maxPending)))}
  SELECT count(*)::int AS announced FROM events`
}

/** Deletes a plant and announces it; false when there was none. */
export async function deletePlant (query: Query, script: Script, id: bigint, maxPending: number): Promise<boolean> {
  for (;;) {
    const plant = await read(query, id)
    if (plant === undefined) return false
    const [, deleted] = await script(deleteScript(plant, maxPending))
    if (deleted.rows[0].deleted === 1) return true
  }
}

export async function read (query: Query, id: bigint): Promise<StoredPlant | undefined> {
  const [row] = (await query<Row>(`${SELECT_PLANTS} WHERE id = $1`, [String(id)])).rows
  return row === undefined ? undefined : toPlant(row)
}

export function bytes (text: string | undefined): Buffer | null {
  return text === undefined ? null : utf8(text)
}

/** A bytea literal for a script, whose statements take no parameters. */
function literal (value: Buffer | null): string {
  return value === null ? 'NULL::bytea' : `${pg.escapeLiteral(`\\x${value.toString('hex')}`)}::bytea`
}
