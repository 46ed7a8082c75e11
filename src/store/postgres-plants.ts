import type pg from 'pg'
import { PlantRejected, StoreUnavailable } from './errors.ts'
import { refused } from './postgres-connection.ts'
import { samePlant, type CreateResult, type StoredPlant } from './store.ts'
import { announcement } from './webhooks.ts'

// The plants table as the PostgreSQL store reads and writes it.

/** A row as node-postgres returns it: int8 as a string, bytea as a Buffer. */
export interface Row { id: string, name: Buffer, tag: Buffer | null }

/** Runs one statement; an unreachable database is thrown as StoreUnavailable. */
export type Query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>

export const SELECT_PLANTS = 'SELECT id, name, tag FROM plants'

/**
 * A page of one tag: an index range scan of plants_by_tag_hash, which holds the tag's
 * md5, so that a tag of any length fits a btree entry; comparing the tag itself rules
 * out a collision. Exported for the test that checks its plan.
 */
export const SELECT_PAGE_BY_TAG = `${SELECT_PLANTS} WHERE md5(tag) = md5($1::bytea) AND tag = $1 AND id >= $2 ORDER BY id LIMIT $3`

// The plants are inserted, and each one inserted is announced to every subscription,
// in one statement: its deliveries commit with it. The subscriptions it announces to are
// locked (FOR KEY SHARE, which only a delete conflicts with) until it commits, so that a
// subscription deleted meanwhile waits for it and then finds its deliveries (see
// unsubscribe). A delivery's id is time-ordered (see StoredDelivery in webhooks.ts); its
// random part is the last 20 hex digits of gen_random_uuid, PostgreSQL 13's.
const INSERT_PLANTS = `WITH batch AS (
    SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::bytea[]) AS batch (id, name, tag, announcement)
  ), inserted AS (
    INSERT INTO plants (id, name, tag) SELECT id, name, tag FROM batch ORDER BY id
    ON CONFLICT (id) DO NOTHING
    RETURNING id
  ), subscribers AS (
    SELECT id FROM webhooks FOR KEY SHARE
  ), announced AS (
    INSERT INTO webhook_deliveries (id, webhook_id, plant_id, payload, next_attempt_at)
    SELECT 'msg_' || lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') || right(replace(gen_random_uuid()::text, '-', ''), 20),
      subscribers.id, batch.id, batch.announcement, now()
    FROM inserted JOIN batch USING (id) CROSS JOIN subscribers
  )
  SELECT id FROM inserted`

/**
 * Writes a batch of creates in one statement, ids ascending so that two instances' batches
 * lock rows in the same order and cannot deadlock; the ids not inserted are read to tell
 * a retry from a conflict. Only before the first INSERT commits may an error throw (and
 * GroupCommit split the batch); after it, errors answer only the plants not yet settled,
 * and with this schema none should come (ON CONFLICT checks constraints first; the tag index holds a hash).
 */
export async function createBatch (query: Query, plants: StoredPlant[]): Promise<Array<CreateResult | Error>> {
  const stored = new Map<bigint, StoredPlant | Error>()
  const created = new Set<StoredPlant>()
  const firsts = new Map<bigint, StoredPlant>()
  for (const plant of plants) if (!firsts.has(plant.id)) firsts.set(plant.id, plant)
  let pending = [...firsts.values()]
  let committed = false
  try {
    while (pending.length > 0) {
      for (const plant of await insert(query, pending)) {
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
async function insert (query: Query, plants: StoredPlant[]): Promise<StoredPlant[]> {
  try {
    const { rows } = await query<{ id: string }>(INSERT_PLANTS,
      [plants.map((p) => String(p.id)), plants.map((p) => utf8(p.name)), plants.map((p) => p.tag === undefined ? null : utf8(p.tag)), plants.map(announcement)])
    const inserted = new Set(rows.map((row) => BigInt(row.id)))
    return plants.filter((plant) => inserted.has(plant.id))
  } catch (err) {
    throw refused(err) ? new PlantRejected({ cause: err }) : err
  }
}

export function utf8 (text: string): Buffer {
  return Buffer.from(text, 'utf8')
}

export function toPlant ({ id, name, tag }: Row): StoredPlant {
  const plant = { id: BigInt(id), name: name.toString('utf8') }
  return tag === null ? plant : { ...plant, tag: tag.toString('utf8') }
}
