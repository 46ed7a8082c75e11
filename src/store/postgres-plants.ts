import { PlantRejected, StoreUnavailable } from './errors.ts'
import { refused } from './postgres-connection.ts'
import { samePlant, type CreateResult, type EventOrigin, type StoredPlant } from './store.ts'
import { EVENTS_LOCK_CTE, EVENTS_LOCKED } from './postgres-changes.ts'
import type { Query } from './postgres-pool.ts'
import { announcing, bytes, utf8 } from './postgres-events.ts'
import { announcement, DEFAULT_MAX_PENDING } from './webhooks.ts'

// The plants table as the PostgreSQL store reads and writes it.

/** A row as node-postgres returns it: int8 as a string, bytea as a Buffer. */
export interface Row { id: string, name: Buffer, tag: Buffer | null }

export const SELECT_PLANTS = 'SELECT id, name, tag FROM plants'

/**
 * A page of one tag: an index range scan of plants_by_tag_hash, which holds the tag's
 * md5, so that a tag of any length fits a btree entry; comparing the tag itself rules
 * out a collision. Exported for the test that checks its plan.
 */
export const SELECT_PAGE_BY_TAG = `${SELECT_PLANTS} WHERE md5(tag) = md5($1::bytea) AND tag = $1 AND id >= $2 ORDER BY id LIMIT $3`

// The plants are inserted, and each one inserted is announced, in one statement: its
// event (its payload, once: the change feed's record; the request's trace context, $6,
// when traced) and its deliveries commit with it (see announcing), after EVENTS_LOCK (see
// postgres-changes.ts), taken before any row is written.
const INSERT_PLANTS = `WITH ${EVENTS_LOCK_CTE}, batch AS (
    SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::bytea[], $6::text[]) AS batch (id, name, tag, announcement, trace_context)
    WHERE ${EVENTS_LOCKED}
  ), inserted AS (
    INSERT INTO plants (id, name, tag) SELECT id, name, tag FROM batch ORDER BY id
    ON CONFLICT (id) DO NOTHING
    RETURNING id
  ), created AS (
    SELECT batch.id AS plant_id, batch.announcement AS payload, batch.trace_context, batch.id AS ord FROM inserted JOIN batch USING (id)
  ), ${announcing('created', 'plant.created', '$5')}
  SELECT id FROM inserted`

/**
 * Writes a batch of creates in one statement, ids ascending so that two instances' batches
 * lock rows in the same order and cannot deadlock; the ids not inserted are read to tell
 * a retry from a conflict. Only before the first INSERT commits may an error throw (and
 * GroupCommit split the batch); after it, errors answer only the plants not yet settled,
 * and with this schema none should come (ON CONFLICT checks constraints first; the tag index holds a hash).
 */
export async function createBatch (query: Query, plants: Array<StoredPlant & EventOrigin>, maxPending = DEFAULT_MAX_PENDING): Promise<Array<CreateResult | Error>> {
  const stored = new Map<bigint, StoredPlant | Error>()
  const created = new Set<StoredPlant>()
  const firsts = new Map<bigint, StoredPlant>()
  for (const plant of plants) if (!firsts.has(plant.id)) firsts.set(plant.id, plant)
  let pending = [...firsts.values()]
  let committed = false
  try {
    while (pending.length > 0) {
      for (const plant of await insert(query, pending, maxPending)) {
        stored.set(plant.id, plant)
        created.add(plant)
      }
      committed = true
      const present = pending.filter((plant) => !created.has(plant))
      if (present.length === 0) break
      const { rows } = await query<Row>(`${SELECT_PLANTS} WHERE id = ANY($1::bigint[])`, [present.map((p) => String(p.id))])
      for (const row of rows) stored.set(BigInt(row.id), toPlant(row))
      // Deleted by another instance between the two statements: insert it again.
      pending = present.filter((plant) => !stored.has(plant.id))
    }
  } catch (err) {
    if (!committed || err instanceof StoreUnavailable) throw err
    for (const plant of firsts.values()) if (!stored.has(plant.id)) stored.set(plant.id, err as Error)
  }
  return plants.map((plant) => {
    if (created.has(plant)) return { outcome: 'created', plant }
    const existing = stored.get(plant.id)!
    if (existing instanceof Error) return existing
    return { outcome: samePlant(existing, plant) ? 'unchanged' : 'conflict', plant: existing }
  })
}

/** Inserts plants of distinct ids in one statement, all or none; returns those it inserted. */
async function insert (query: Query, plants: Array<StoredPlant & EventOrigin>, maxPending: number): Promise<StoredPlant[]> {
  try {
    const { rows } = await query<{ id: string }>(INSERT_PLANTS,
      [plants.map((p) => String(p.id)), plants.map((p) => utf8(p.name)), plants.map((p) => bytes(p.tag)), plants.map(announcement), maxPending,
        traceContexts(plants)])
    const inserted = new Set(rows.map((row) => BigInt(row.id)))
    return plants.filter((plant) => inserted.has(plant.id))
  } catch (err) {
    throw refused(err) ? new PlantRejected({ cause: err }) : err
  }
}

/** Each plant's trace context; null (unnest pads it with NULLs) when none was traced, as when tracing is off. */
function traceContexts (plants: EventOrigin[]): Array<string | null> | null {
  if (plants.every((plant) => plant.traceContext === undefined)) return null
  return plants.map((plant) => plant.traceContext ?? null)
}

export function toPlant ({ id, name, tag }: Row): StoredPlant {
  const plant = { id: BigInt(id), name: name.toString('utf8') }
  return tag === null ? plant : { ...plant, tag: tag.toString('utf8') }
}
