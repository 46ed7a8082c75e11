import { Commit } from '../commits.ts'
import { PlantRejected, StoreUnavailable } from '../errors.ts'
import { refused } from './connection.ts'
import { bytes, SELECT_PLANTS, toPlant, utf8, type Row } from './plants.ts'
import type { Query, Script } from './pool.ts'
import { deleteScript, INSERT_PLANTS, UPDATE_PLANTS } from './writes.ts'
import {
  changed, samePlant, settledUpdate, type CreateResult, type PlantChange, type Precondition, type StoredPlant, type UpdateResult
} from '../store.ts'
import { announcement, DEFAULT_MAX_PENDING, updatedAnnouncement } from '../webhooks.ts'

// The batches of the PostgreSQL store's group commits: creates, updates and deletes that
// arrive together share a statement (a delete's, one script), its only commit.

/** Besides its items, a batch is given each one's trace context, the bound of a subscription's pending deliveries, and the Commit that counts what it wrote. */
export interface Batch { traceContexts: Array<string | undefined>, maxPending: number, commit: Commit }

/** The answer of a write whose plant changed since it was read: read it and decide again. */
export const AGAIN = Symbol('again')

/** An update waiting for its group commit: what to write, and the plant it read when it had to write. */
export interface Update { id: bigint, change: PlantChange, precondition?: Precondition, previous: StoredPlant }

/** The index of the first item of each id, ascending by id: batches lock rows in one order, so that two instances' cannot deadlock. */
function firstById (items: ReadonlyArray<{ id: bigint }>): number[] {
  const firsts = new Map<bigint, number>()
  items.forEach(({ id }, i) => { if (!firsts.has(id)) firsts.set(id, i) })
  return [...firsts.values()].sort((a, b) => items[a].id < items[b].id ? -1 : 1)
}

/** The trace contexts as a column; null (unnest pads it with NULLs) when none was traced, as when tracing is off. */
function traceColumn (traceContexts: Array<string | undefined>): Array<string | null> | null {
  return traceContexts.some((traceContext) => traceContext !== undefined) ? traceContexts.map((traceContext) => traceContext ?? null) : null
}

/**
 * Creates in one statement, the ids not inserted read to tell a retry from a conflict. Once the
 * INSERT committed, an error answers only the plants not yet settled: GroupCommit must not split.
 */
export async function createBatch (query: Query, plants: StoredPlant[],
  batch: Batch = { traceContexts: [], maxPending: DEFAULT_MAX_PENDING, commit: new Commit() }): Promise<Array<CreateResult | Error>> {
  const stored = new Map<bigint, StoredPlant | Error>()
  const created = new Set<number>()
  let pending = firstById(plants)
  let committed = false
  try {
    while (pending.length > 0) {
      const inserted = await insert(query, pending, plants, batch)
      committed = true
      for (const i of pending) {
        if (!inserted.has(plants[i].id)) continue
        stored.set(plants[i].id, plants[i])
        created.add(i)
      }
      const present = pending.filter((i) => !created.has(i))
      if (present.length === 0) break
      const { rows } = await query<Row>(`${SELECT_PLANTS} WHERE id = ANY($1::bigint[])`, [present.map((i) => String(plants[i].id))])
      for (const row of rows) stored.set(BigInt(row.id), toPlant(row))
      // Deleted by another instance between the two statements: insert it again.
      pending = present.filter((i) => !stored.has(plants[i].id))
    }
  } catch (err) {
    if (!committed || err instanceof StoreUnavailable) throw err
    for (const plant of plants) if (!stored.has(plant.id)) stored.set(plant.id, err as Error)
  }
  return plants.map((plant, i) => {
    if (created.has(i)) return { outcome: 'created', plant }
    const existing = stored.get(plant.id)!
    if (existing instanceof Error) return existing
    return { outcome: samePlant(existing, plant) ? 'unchanged' : 'conflict', plant: existing }
  })
}

/** Inserts the plants at `which` (distinct ids) in one statement, all or none; returns the ids it inserted. */
async function insert (query: Query, which: number[], all: StoredPlant[], { traceContexts, maxPending, commit }: Batch): Promise<Set<bigint>> {
  const plants = which.map((i) => all[i])
  try {
    const { rows } = await query<{ id: string, queued?: number }>(INSERT_PLANTS, [plants.map((p) => String(p.id)), plants.map((p) => utf8(p.name)),
      plants.map((p) => bytes(p.tag)), plants.map(announcement), maxPending, traceColumn(which.map((i) => traceContexts[i]))])
    commit.events += rows.length
    commit.deliveries += rows[0]?.queued ?? 0
    return new Set(rows.map((row) => BigInt(row.id)))
  } catch (err) {
    throw refused(err) ? new PlantRejected({ cause: err }) : err
  }
}

/** A plant's updates in one batch: from the state read, through each update in turn. */
interface Chain { id: bigint, from: StoredPlant, to: StoredPlant, events: Array<{ payload: Buffer, traceContext?: string }> }

/**
 * Updates in one statement, each decided against the plant as the updates before it in the
 * batch leave it; those of a plant changed since it was read answer AGAIN.
 */
export async function updateBatch (query: Query, updates: Update[], { traceContexts, maxPending, commit }: Batch): Promise<Array<UpdateResult | typeof AGAIN>> {
  const chains = new Map<bigint, Chain>()
  const results = updates.map(({ id, change, precondition, previous }, i): UpdateResult => {
    let chain = chains.get(id)
    if (chain === undefined) chains.set(id, chain = { id, from: previous, to: previous, events: [] })
    const settled = settledUpdate(chain.to, change, precondition)
    if (settled !== undefined) return settled
    const plant = changed(id, change)
    chain.events.push({ payload: updatedAnnouncement(chain.to, plant), traceContext: traceContexts[i] })
    const result: UpdateResult = { outcome: 'updated', plant, previous: chain.to }
    chain.to = plant
    return result
  })
  const writing = [...chains.values()].filter((chain) => chain.events.length > 0)
  const written = firstById(writing).map((i) => writing[i])
  const events = written.flatMap((chain) => chain.events.map((event) => ({ id: chain.id, ...event })))
  let rows: Array<{ id: string, queued: number }>
  try {
    rows = (await query<{ id: string, queued: number }>(UPDATE_PLANTS, [
      written.map((chain) => String(chain.id)), written.map((chain) => utf8(chain.to.name)), written.map((chain) => bytes(chain.to.tag)),
      written.map((chain) => utf8(chain.from.name)), written.map((chain) => bytes(chain.from.tag)),
      events.map((event) => String(event.id)), events.map((event) => event.payload), maxPending, traceColumn(events.map((event) => event.traceContext))
    ])).rows
  } catch (err) {
    throw refused(err) ? new PlantRejected({ cause: err }) : err
  }
  const updated = new Set(rows.map((row) => BigInt(row.id)))
  commit.events += events.filter((event) => updated.has(event.id)).length
  commit.deliveries += rows[0]?.queued ?? 0
  // Changed or deleted by another writer since it was read: every update of that plant decides again.
  return results.map((result, i) => updated.has(updates[i].id) ? result : AGAIN)
}

/** Deletes in one transaction: true for a plant's first delete, false for its others; AGAIN when it changed since it was read. */
export async function deleteBatch (script: Script, plants: StoredPlant[], { traceContexts, maxPending, commit }: Batch): Promise<Array<boolean | typeof AGAIN>> {
  const firsts = firstById(plants)
  const [, { rows: [{ deleted }] }, { rows: [{ announced, queued }] }] = await script(deleteScript(firsts.map((i) => plants[i]), firsts.map((i) => traceContexts[i]), maxPending))
  const gone = new Set((deleted as string).split(',').filter((id) => id !== '').map(BigInt))
  commit.deletions += gone.size
  commit.events += announced as number
  commit.deliveries += queued as number
  const answered = new Set<bigint>()
  return plants.map((plant) => {
    if (!gone.has(plant.id)) return AGAIN
    if (answered.has(plant.id)) return false
    answered.add(plant.id)
    return true
  })
}
