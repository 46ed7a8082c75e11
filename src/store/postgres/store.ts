import { setTimeout as sleep } from 'node:timers/promises'
import { GroupCommit } from '../group-commit.ts'
import { Outage } from '../outage.ts'
import { codeOf, StoreUnavailable } from '../errors.ts'
import { probe, SETTINGS_TO_CHECK, settingsRefused, unavailable } from './connection.ts'
import { storeLocation } from '../location.ts'
import { Commit, Commits } from '../commits.ts'
import { AGAIN, createBatch, deleteBatch, updateBatch, type Batch, type Update } from './batches.ts'
import { SELECT_PAGE_BY_TAG, SELECT_PLANTS, toPlant, utf8, type Row } from './plants.ts'
import { PostgresPool } from './pool.ts'
import { migrate, SCHEMA_VERSION } from './schema.ts'
import { PostgresChanges } from './changes.ts'
import { PostgresWebhooks } from './webhooks.ts'
import {
  changed, pageStart, plantBytes, settledDelete, settledUpdate, type CreateResult, type DeleteOutcome, type ListQuery, type PlantChange, type Precondition, type StoredPlant, type PlantStore,
  type StoreContext, type UpdateResult
} from '../store.ts'

const FIRST_RETRY_MS = 100
const MAX_RETRY_MS = 5000
// An outage ends on a read of the plants table, not SELECT 1: a table an administrator
// locked times every statement out while the server still answers.
const PROBE = 'SELECT 1 FROM plants WHERE id = 0'

/**
 * Plants in PostgreSQL, shared by every instance pointed at the database; creates that
 * arrive together share one statement and commit. The store opens whether or not the
 * database answers: until connected and migrated (retried with backoff), and while down,
 * every operation answers 503 at once. A created plant's deliveries are written by its insert.
 */
export class PostgresStore implements PlantStore {
  readonly webhooks: PostgresWebhooks
  readonly changes: PostgresChanges
  readonly commits = new Commits()
  readonly #pool: PostgresPool
  readonly #log: StoreContext['log']
  readonly #outage: Outage
  readonly #creates: GroupCommit<StoredPlant, CreateResult | Error>
  readonly #updates: GroupCommit<Update, UpdateResult | typeof AGAIN>
  readonly #deletes: GroupCommit<StoredPlant, boolean | typeof AGAIN>
  readonly #closing = new AbortController()
  readonly #started: Promise<void>
  #ready = false
  /** Why the store is not ready yet: the last failed start attempt. */
  #startError: unknown

  /**
   * Resolves once the first attempt to connect and migrate has ended, whether it succeeded
   * or not; rejects when its connection settings were refused, which retrying cannot mend.
   */
  static async open (url: string, poolSize: number, context: StoreContext, preparedStatements = false): Promise<PostgresStore> {
    let firstAttempt!: (refusal?: Error) => void
    const attempted = new Promise<Error | undefined>((resolve) => { firstAttempt = resolve })
    const store = new PostgresStore(url, poolSize, preparedStatements, context, firstAttempt)
    const refusal = await attempted
    if (refusal === undefined) return store
    await store.close()
    throw refusal
  }

  private constructor (url: string, poolSize: number, preparedStatements: boolean, { log, maxBatch, maxQueueBytes, onBatch }: StoreContext, firstAttempt: (refusal?: Error) => void) {
    this.#log = log
    this.#outage = new Outage(log, 'PostgreSQL', async () => await probe(url, PROBE))
    this.#pool = new PostgresPool({ url, size: poolSize, preparedStatements }, log, this.#outage, () => this.#available())
    const query = this.#pool.query.bind(this.#pool)
    const script = this.#pool.script.bind(this.#pool)
    this.webhooks = new PostgresWebhooks(query, script, this.commits)
    this.changes = new PostgresChanges(query)
    // WRITE_QUEUE_LIMIT_BYTES bounds what waits in the three queues together.
    const waiting = { bytes: 0 }
    // A queue for each kind of write, not one of mixed writes: each batch stays one statement
    // (a delete's, one script), its only commit, so a failed batch wrote nothing.
    const queue = <Item, Result>(write: (items: Item[], batch: Batch) => Promise<Result[]>, sizeOf: (item: Item) => number) =>
      new GroupCommit<Item, Result>({
        write: async (items, traceContexts) => {
          const commit = new Commit()
          const results = await write(items, { traceContexts, maxPending: this.webhooks.maxPending, commit })
          this.#outage.recover(true)
          this.commits.tell(commit)
          return results
        },
        sizeOf,
        maxBatch,
        maxQueueBytes,
        onBatch,
        waiting
      })
    this.#creates = queue(async (plants, batch) => await createBatch(query, plants, batch), plantBytes)
    this.#updates = queue(async (updates, batch) => await updateBatch(query, updates, batch), (update) => plantBytes(changed(update.id, update.change)))
    this.#deletes = queue(async (plants, batch) => await deleteBatch(script, plants, batch), plantBytes)
    // What a refusal of the connection settings asks the operator to check.
    const toCheck = preparedStatements
      ? `${SETTINGS_TO_CHECK}; DATABASE_PREPARED_STATEMENTS=true sends the statement timeout as a startup parameter, for a direct connection only`
      : SETTINGS_TO_CHECK
    this.#started = this.#start(url, toCheck, firstAttempt)
  }

  async create (plant: StoredPlant): Promise<CreateResult> {
    this.#available()
    const result = await this.#creates.submit(plant)
    if (result instanceof Error) throw result // refused after its batch had committed: see createBatch
    return result
  }

  async get (id: bigint): Promise<StoredPlant | undefined> {
    const [row] = (await this.#pool.query<Row>(`${SELECT_PLANTS} WHERE id = $1`, [String(id)])).rows
    return row === undefined ? undefined : toPlant(row)
  }

  async list ({ limit, after, tag }: ListQuery): Promise<StoredPlant[]> {
    const from = pageStart(after)
    if (from === undefined) return []
    const { rows } = tag === undefined
      ? await this.#pool.query<Row>(`${SELECT_PLANTS} WHERE id >= $1 ORDER BY id LIMIT $2`, [String(from), limit])
      : await this.#pool.query<Row>(SELECT_PAGE_BY_TAG, [utf8(tag), String(from), limit])
    return rows.map(toPlant)
  }

  // Looks before it writes, so that an absent, stale or unchanged plant costs no commit; the
  // batch writes only if the plant is still the one read (see writes.ts).
  async update (id: bigint, change: PlantChange, precondition?: Precondition): Promise<UpdateResult> {
    for (;;) {
      const previous = await this.get(id)
      const settled = settledUpdate(previous, change, precondition)
      if (settled !== undefined) return settled
      const result = await this.#updates.submit({ id, change, precondition, previous: previous! })
      if (result !== AGAIN) return result
    }
  }

  // Looks first too: deleting no plant costs no commit. The batch deletes the plant only
  // while it is still the one read (see writes.ts), so the precondition decided
  // on the read is the deleted plant's.
  async delete (id: bigint, precondition?: Precondition): Promise<DeleteOutcome> {
    for (;;) {
      const plant = await this.get(id)
      const settled = settledDelete(plant, precondition)
      if (settled !== undefined) return settled
      const result = await this.#deletes.submit(plant!)
      if (result === AGAIN) continue
      return result ? 'deleted' : 'absent'
    }
  }

  async ping (): Promise<void> {
    await this.#pool.query('SELECT 1')
  }

  async close (): Promise<void> {
    this.#closing.abort()
    await this.#started
    await this.#creates.drain()
    await this.#updates.drain()
    await this.#deletes.drain()
    await this.#outage.close()
    await this.#pool.close()
  }

  /**
   * Connects and migrates until it succeeds or the store closes, each failure logged, the
   * wait doubling to MAX_RETRY_MS; a first attempt whose settings are refused ends the start.
   */
  async #start (url: string, toCheck: string, firstAttempt: (refusal?: Error) => void): Promise<void> {
    for (let attempt = 1, delay = FIRST_RETRY_MS; ; attempt++, delay = Math.min(2 * delay, MAX_RETRY_MS)) {
      try {
        await migrate(this.#pool.pool)
        this.#ready = true
        this.#log.info({ attempt, schemaVersion: SCHEMA_VERSION }, 'the PostgreSQL store is available: connected and migrated')
        return
      } catch (err) {
        this.#startError = err
        if (this.#closing.signal.aborted) return
        if (settingsRefused(err)) {
          const refused = `PostgreSQL, or a pooler in front of it, refuses the service's connection settings (${(err as Error).message}, ${codeOf(err)})`
          if (attempt === 1) {
            firstAttempt(new Error(`DATABASE_URL postgres://${storeLocation({ engine: 'postgres', url, poolSize: 1 })} cannot be used: ${refused}: ${toCheck}`, { cause: err }))
            return
          }
          this.#log.error({ err, attempt, retryInMs: delay }, `the PostgreSQL store cannot start: a configuration error (${toCheck}); answering 503 and retrying`)
        } else {
          // Anything but an unreachable database is a setting or schema to fix: louder.
          this.#log[unavailable(err) ? 'warn' : 'error']({ err, attempt, retryInMs: delay },
            'the PostgreSQL store cannot start yet; answering 503 and retrying')
        }
      } finally {
        firstAttempt() // later calls change nothing
      }
      try {
        await sleep(delay, undefined, { signal: this.#closing.signal })
      } catch {
        return // closed while waiting
      }
    }
  }

  /** Throws StoreUnavailable until the store has started, and while it is down. */
  #available (): void {
    if (!this.#ready) throw new StoreUnavailable({ cause: this.#startError })
    this.#outage.check()
  }
}
