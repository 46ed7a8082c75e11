import pg from 'pg'
import { EVENTS_LOCK } from './postgres-changes.ts'
import { AGAIN, announcing, bytes, byteaLiteral, utf8 } from './postgres-events.ts'
import type { Script } from './postgres-pool.ts'
import type { EventOrigin, StoredPlant } from './store.ts'
import { deletedAnnouncement } from './webhooks.ts'

// Deletes that arrive together share one transaction, as creates and updates do.

/**
 * Deletes the plants still as they were read, then announces each deletion, in one
 * transaction; the ids it deleted pass to the second statement in a transaction-local
 * setting. A deleted plant's earlier events are left to erase (plant_erasures), whatever
 * their number: they read as erased once it commits, and the cleanup erases them.
 */
function deleteScript (plants: Array<StoredPlant & EventOrigin>, maxPending: number): string {
  // Quoted: a bare -9223372036854775808::bigint casts 9223372036854775808 first, out of range.
  const id = (plant: StoredPlant): string => `'${plant.id}'::bigint`
  const read = plants.map((plant) => `(${id(plant)}, ${byteaLiteral(utf8(plant.name))}, ${byteaLiteral(bytes(plant.tag))})`)
  const origin = (plant: EventOrigin): string => plant.traceContext === undefined ? 'NULL::text' : pg.escapeLiteral(plant.traceContext)
  const payloads = plants.map((plant, i) => `(${id(plant)}, ${byteaLiteral(deletedAnnouncement(plant))}, ${origin(plant)}, ${i})`)
  return `SELECT pg_advisory_xact_lock(${EVENTS_LOCK});
    WITH batch (id, name, tag) AS (VALUES ${read.join(', ')}),
    gone AS (
      DELETE FROM plants USING batch
      WHERE plants.id = batch.id AND plants.name = batch.name AND plants.tag IS NOT DISTINCT FROM batch.tag
      RETURNING plants.id)
    SELECT set_config('plant_store.deleted', coalesce(string_agg(id::text, ','), ''), true) AS deleted FROM gone;
  WITH gone AS (
    SELECT plant_id, payload, trace_context, ord FROM (VALUES ${payloads.join(', ')}) AS batch (plant_id, payload, trace_context, ord)
    WHERE plant_id = ANY (string_to_array(current_setting('plant_store.deleted'), ',')::bigint[])),
    ${announcing('gone', 'plant.deleted', String(Math.trunc(maxPending)))},
    erasing AS (INSERT INTO plant_erasures (plant_id, before_seq) SELECT plant_id, seq FROM events)
  SELECT count(*)::int AS announced FROM events`
}

/**
 * Deletes a batch of plants, each as it was read, in one transaction: true for the first
 * delete of each plant deleted, false for the others of it in the batch (it is gone by
 * then); AGAIN for every delete of a plant changed since it was read.
 */
export async function deleteBatch (script: Script, plants: Array<StoredPlant & EventOrigin>, maxPending: number): Promise<Array<boolean | typeof AGAIN>> {
  const firsts = new Map<bigint, StoredPlant>()
  for (const plant of plants) if (!firsts.has(plant.id)) firsts.set(plant.id, plant)
  // Ids ascending, as creates and updates lock theirs.
  const [, { rows: [{ deleted }] }] = await script(deleteScript([...firsts.values()].sort((a, b) => a.id < b.id ? -1 : 1), maxPending))
  const gone = new Set((deleted as string).split(',').filter((id) => id !== '').map(BigInt))
  const answered = new Set<bigint>()
  return plants.map((plant) => {
    if (!gone.has(plant.id)) return AGAIN
    if (answered.has(plant.id)) return false
    answered.add(plant.id)
    return true
  })
}
