import pg from 'pg'
import type { EventType } from '../../schemas/webhook.ts'
import { PlantRejected } from './errors.ts'
import { refused } from './postgres-connection.ts'
import { SELECT_PLANTS, toPlant, utf8, type Row } from './postgres-plants.ts'
import type { Query, Script } from './postgres-pool.ts'
import { EVENTS_LOCK, EVENTS_LOCK_CTE, EVENTS_LOCKED } from './postgres-changes.ts'
import { NEW_DELIVERY_ID } from './postgres-webhooks.ts'
import { changed, settledUpdate, type PlantChange, type Precondition, type StoredPlant, type UpdateResult } from './store.ts'
import { deletedAnnouncement, eventBit, PLANT_DELETED, updatedAnnouncement } from './webhooks.ts'

// A plant's update and delete, each with its event in the same transaction, after
// EVENTS_LOCK (see postgres-changes.ts). Each writes only while the plant is still the one
// read (compare and set), so two instances cannot both act on one state: the one that
// finds it changed reads it again.

/**
 * The CTEs that announce the event of each row of `source` (column plant_id): its payload
 * once, and a delivery to each enabled subscription choosing the event below `max`
 * pending; one the event would take past it is disabled instead. The subscriptions are
 * locked in id order, as a create's are (see postgres-plants.ts).
 */
function announcing (source: string, type: EventType, payload: string, max: string): string {
  return `subscribers AS (
    SELECT id, pending, disabled_at FROM webhooks WHERE events & ${eventBit(type)} <> 0 AND EXISTS (SELECT 1 FROM ${source}) ORDER BY id FOR NO KEY UPDATE
  ), events AS (
    INSERT INTO webhook_events (plant_id, type, payload)
    SELECT plant_id, '${type}', ${payload} FROM ${source} RETURNING seq, plant_id
  ), open AS (
    SELECT subscribers.id FROM subscribers WHERE EXISTS (SELECT 1 FROM events) AND subscribers.disabled_at IS NULL AND subscribers.pending + 1 <= ${max}
  ), announced AS (
    INSERT INTO webhook_deliveries (id, webhook_id, plant_id, event_seq, next_attempt_at)
    SELECT ${NEW_DELIVERY_ID}, open.id, events.plant_id, events.seq, now() FROM events CROSS JOIN open
  ), opened AS (
    UPDATE webhooks SET pending = webhooks.pending + 1 FROM open WHERE webhooks.id = open.id
  ), disabled AS (
    UPDATE webhooks SET disabled_at = now(), missed_since = coalesce(webhooks.missed_since, now()),
      missed_from = coalesce(webhooks.replay_from, events.seq), replay_from = NULL, replay_to = NULL
    FROM subscribers, events
    WHERE webhooks.id = subscribers.id AND subscribers.disabled_at IS NULL AND subscribers.pending + 1 > ${max}
  )`
}

const UPDATE_PLANT = `WITH ${EVENTS_LOCK_CTE}, changed AS (
    UPDATE plants SET name = $2, tag = $3 WHERE id = $1 AND ${EVENTS_LOCKED} AND name = $4 AND tag IS NOT DISTINCT FROM $5::bytea RETURNING id AS plant_id
  ), ${announcing('changed', 'plant.updated', '$6::bytea', '$7')}
  SELECT count(*)::int AS updated FROM changed`

/** Replaces a plant's name and tag if the precondition accepts it as stored when the update writes. */
export async function updatePlant (
  query: Query, id: bigint, change: PlantChange, precondition: Precondition | undefined, maxPending: number
): Promise<UpdateResult> {
  for (;;) {
    const previous = await read(query, id)
    const settled = settledUpdate(previous, change, precondition)
    if (settled !== undefined) return settled
    const plant = changed(id, change)
    const [{ updated }] = (await query<{ updated: number }>(UPDATE_PLANT, [
      String(id), utf8(plant.name), bytes(plant.tag), utf8(previous!.name), bytes(previous!.tag),
      updatedAnnouncement(previous!, plant), maxPending
    ]).catch((err: unknown) => { throw refused(err) ? new PlantRejected({ cause: err }) : err })).rows
    if (updated === 1) return { outcome: 'updated', plant, previous }
    // Changed or deleted by another writer since it was read: decide again on what is there now.
  }
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
  WITH gone AS (SELECT ${id} AS plant_id WHERE current_setting('plant_store.deleted') = '1'),
    ${announcing('gone', 'plant.deleted', literal(deletedAnnouncement(plant)), String(Math.trunc(maxPending)))}
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

async function read (query: Query, id: bigint): Promise<StoredPlant | undefined> {
  const [row] = (await query<Row>(`${SELECT_PLANTS} WHERE id = $1`, [String(id)])).rows
  return row === undefined ? undefined : toPlant(row)
}

function bytes (text: string | undefined): Buffer | null {
  return text === undefined ? null : utf8(text)
}

/** A bytea literal for a script, whose statements take no parameters. */
function literal (value: Buffer | null): string {
  return value === null ? 'NULL::bytea' : `${pg.escapeLiteral(`\\x${value.toString('hex')}`)}::bytea`
}
