import { PlantRejected } from './errors.ts'
import { refused } from './postgres-connection.ts'
import { EVENTS_LOCK_CTE, EVENTS_LOCKED } from './postgres-changes.ts'
import { AGAIN, announcing, bytes, utf8 } from './postgres-events.ts'
import type { Query } from './postgres-pool.ts'
import { changed, settledUpdate, type EventOrigin, type PlantChange, type Precondition, type StoredPlant, type UpdateResult } from './store.ts'
import { updatedAnnouncement } from './webhooks.ts'

// Updates that arrive together share one statement, so one commit, as creates do.

/** An update waiting for its group commit: what to write, and the plant it read when it had to write. */
export interface Update { id: bigint, change: PlantChange & EventOrigin, precondition?: Precondition, previous: StoredPlant }

// Each plant is written once, from the state read to the last state of its updates (compare
// and set: a plant another writer changed since is left alone), with the event of each of
// its updates in order, after EVENTS_LOCK (see postgres-changes.ts), taken before any row.
const UPDATE_PLANTS = `WITH ${EVENTS_LOCK_CTE}, batch AS (
    SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[]) AS batch (id, name, tag, old_name, old_tag)
    WHERE ${EVENTS_LOCKED}
  ), changed AS (
    UPDATE plants SET name = batch.name, tag = batch.tag FROM batch
    WHERE plants.id = batch.id AND plants.name = batch.old_name AND plants.tag IS NOT DISTINCT FROM batch.old_tag
    RETURNING plants.id
  ), updates AS (
    SELECT plant_id, payload, trace_context, ord FROM unnest($6::bigint[], $7::bytea[], $9::text[]) WITH ORDINALITY AS updates (plant_id, payload, trace_context, ord)
    WHERE plant_id IN (SELECT id FROM changed)
  ), ${announcing('updates', 'plant.updated', '$8')}
  SELECT id FROM changed`

/** A plant's updates in one batch: from the state read, through each update in turn. */
interface Chain { id: bigint, from: StoredPlant, to: StoredPlant, events: Array<{ payload: Buffer, traceContext?: string }> }

/**
 * Writes a batch of updates in one statement, each decided in turn against the plant as
 * the updates before it in the batch leave it (so two of one plant apply in order). When a
 * plant changed since it was read, its updates answer AGAIN. The one statement is the one
 * commit: an error throws before it, and GroupCommit splits the batch.
 */
export async function updateBatch (query: Query, updates: Update[], maxPending: number): Promise<Array<UpdateResult | typeof AGAIN>> {
  const chains = new Map<bigint, Chain>()
  const results = updates.map(({ id, change, precondition, previous }): UpdateResult => {
    let chain = chains.get(id)
    if (chain === undefined) chains.set(id, chain = { id, from: previous, to: previous, events: [] })
    const settled = settledUpdate(chain.to, change, precondition)
    if (settled !== undefined) return settled
    const plant = changed(id, change)
    chain.events.push({ payload: updatedAnnouncement(chain.to, plant), traceContext: change.traceContext })
    const result: UpdateResult = { outcome: 'updated', plant, previous: chain.to }
    chain.to = plant
    return result
  })
  // Ids ascending, as creates lock theirs.
  const written = [...chains.values()].filter((chain) => chain.events.length > 0).sort((a, b) => a.id < b.id ? -1 : 1)
  const events = written.flatMap((chain) => chain.events.map((event) => ({ id: chain.id, ...event })))
  let rows: Array<{ id: string }>
  try {
    rows = (await query<{ id: string }>(UPDATE_PLANTS, [
      written.map((chain) => String(chain.id)), written.map((chain) => utf8(chain.to.name)), written.map((chain) => bytes(chain.to.tag)),
      written.map((chain) => utf8(chain.from.name)), written.map((chain) => bytes(chain.from.tag)),
      events.map((event) => String(event.id)), events.map((event) => event.payload), maxPending,
      // unnest pads a NULL array with NULLs: nothing to send when none was traced, as when tracing is off.
      events.some((event) => event.traceContext !== undefined) ? events.map((event) => event.traceContext ?? null) : null
    ])).rows
  } catch (err) {
    throw refused(err) ? new PlantRejected({ cause: err }) : err
  }
  const updated = new Set(rows.map((row) => BigInt(row.id)))
  // Changed or deleted by another writer since it was read: every update of that plant decides again.
  return results.map((result, i) => updated.has(updates[i].id) ? result : AGAIN)
}

/** True when some result of a batch wrote. */
export function wrote (results: Array<UpdateResult | typeof AGAIN>): boolean {
  return results.some((result) => result !== AGAIN && result.outcome === 'updated')
}
