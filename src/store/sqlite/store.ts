import type Database from 'better-sqlite3'
import { tracing } from '../../tracing/hooks.ts'
import { openDatabase } from './open.ts'
import type { Commits } from '../commits.ts'
import { SqliteChanges } from './changes.ts'
import { SqliteDurable } from './durable.ts'
import { SqliteWebhooks } from './webhooks.ts'
import { announcement, deletedAnnouncement, updatedAnnouncement } from '../webhooks.ts'
import {
  changed, pageStart, plantBytes, samePlant, settledDelete, settledUpdate, WRITE_OVERHEAD_BYTES,
  type CreateResult, type DeleteOutcome, type ListQuery, type PlantChange, type Precondition, type StoredPlant, type PlantStore, type StoreContext,
  type UpdateResult
} from '../store.ts'

interface Row { id: bigint, name: string, tag: string | null }

/**
 * Plants in a SQLite file (or in memory, for tests and demos). Each change's event (the
 * change feed's record) and webhook deliveries are written in its transaction.
 */
export class SqliteStore implements PlantStore {
  readonly webhooks: SqliteWebhooks
  readonly changes: SqliteChanges
  readonly commits: Commits
  readonly #durable: SqliteDurable
  readonly #statements

  constructor (path: string, context: StoreContext) {
    const db = openDatabase(path)
    try {
      this.#durable = new SqliteDurable(db, path, context)
    } catch (err) {
      db.close()
      throw err
    }
    this.#statements = prepare(db)
    const durable = this.#durable
    this.commits = durable.commits
    this.webhooks = new SqliteWebhooks(db, durable.write.bind(durable), durable.read.bind(durable))
    this.changes = new SqliteChanges(db, durable.read.bind(durable))
  }

  async create (plant: StoredPlant): Promise<CreateResult> {
    return await this.#durable.write(plantBytes(plant), (commit, traceContext): CreateResult => {
      if (this.#statements.insert.run(plant.id, plant.name, plant.tag ?? null).changes === 1) {
        const announce = (): void => { this.webhooks.announce(commit, 'plant.created', plant.id, announcement(plant), traceContext) }
        if (tracing.spans === undefined) announce()
        else tracing.spans.outbox(announce)
        return { outcome: 'created', plant }
      }
      const existing = toPlant(this.#statements.get.get(plant.id)!)
      return { outcome: samePlant(existing, plant) ? 'unchanged' : 'conflict', plant: existing }
    })
  }

  async get (id: bigint): Promise<StoredPlant | undefined> {
    const row = await this.#durable.read(() => this.#statements.get.get(id))
    return row === undefined ? undefined : toPlant(row)
  }

  async list ({ limit, after, tag }: ListQuery): Promise<StoredPlant[]> {
    const from = pageStart(after)
    if (from === undefined) return []
    const rows = await this.#durable.read(() => tag === undefined
      ? this.#statements.page.all(from, limit)
      : this.#statements.pageByTag.all(tag, from, limit))
    return rows.map(toPlant)
  }

  // Looks before it writes, so that an absent, stale or unchanged plant costs no commit;
  // the transaction looks again, and the precondition is decided there.
  async update (id: bigint, change: PlantChange, precondition?: Precondition): Promise<UpdateResult> {
    const settled = settledUpdate(await this.get(id), change, precondition)
    if (settled !== undefined) return settled
    const plant = changed(id, change)
    return await this.#durable.write(plantBytes(plant), (commit, traceContext): UpdateResult => {
      const row = this.#statements.get.get(id)
      const previous = row === undefined ? undefined : toPlant(row)
      const outcome = settledUpdate(previous, change, precondition)
      if (outcome !== undefined) return outcome
      this.#statements.update.run(plant.name, plant.tag ?? null, id)
      this.webhooks.announce(commit, 'plant.updated', id, updatedAnnouncement(previous!, plant), traceContext)
      return { outcome: 'updated', plant, previous }
    })
  }

  // Looks before it writes too; the transaction looks again, and decides the precondition.
  async delete (id: bigint, precondition?: Precondition): Promise<DeleteOutcome> {
    const settled = settledDelete(await this.get(id), precondition)
    if (settled !== undefined) return settled
    return await this.#durable.write(WRITE_OVERHEAD_BYTES, (commit, traceContext): DeleteOutcome => {
      const current = this.#statements.get.get(id)
      const outcome = settledDelete(current === undefined ? undefined : toPlant(current), precondition)
      if (outcome !== undefined) return outcome
      const row = this.#statements.delete.get(id)!
      // Its earlier payloads are erased (in the background); the deletion itself carries the name and tag it had.
      const deletion = this.webhooks.announce(commit, 'plant.deleted', id, deletedAnnouncement(toPlant(row)), traceContext)
      this.webhooks.erasing(commit, id, deletion)
      return 'deleted'
    })
  }

  async ping (): Promise<void> {
    this.#durable.run(() => this.#statements.ping.get())
    this.#durable.stillTheFile()
  }

  async close (): Promise<void> {
    await this.#durable.close()
  }
}

/**
 * `+?`, never a bare `?`, in LIMIT or equal to a non-unique index's first column: SQLite
 * (built with STAT4) re-plans a bare one on every run by its bound value; `+?` is planned
 * once. `npm run lint` refuses a bare one where it matters.
 */
function prepare (db: Database.Database) {
  return {
    insert: db.prepare<[bigint, string, string | null]>('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'),
    get: db.prepare<[bigint], Row>('SELECT id, name, tag FROM plants WHERE id = ?'),
    page: db.prepare<[bigint, number], Row>('SELECT id, name, tag FROM plants WHERE id >= ? ORDER BY id LIMIT +?'),
    pageByTag: db.prepare<[string, bigint, number], Row>('SELECT id, name, tag FROM plants WHERE tag = +? AND id >= ? ORDER BY id LIMIT +?'),
    update: db.prepare<[string, string | null, bigint]>('UPDATE plants SET (name, tag) = (?, ?) WHERE id = ?'),
    delete: db.prepare<[bigint], Row>('DELETE FROM plants WHERE id = ? RETURNING id, name, tag'),
    ping: db.prepare('SELECT 1')
  }
}

function toPlant ({ id, name, tag }: Row): StoredPlant {
  return tag === null ? { id, name } : { id, name, tag }
}
