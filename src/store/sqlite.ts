import { mkdirSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import { monotonicMs } from '../monotonic-clock.ts'
import { codeOf, PlantRejected } from './errors.ts'
import { FileIdentity } from './file-identity.ts'
import { GroupCommit } from './group-commit.ts'
import { Outage } from './outage.ts'
import { migrate, refuseForeign } from './sqlite-schema.ts'
import { SqliteWebhooks } from './sqlite-webhooks.ts'
import { WalSync } from './wal-sync.ts'
import {
  pageStart, plantBytes, samePlant, WRITE_OVERHEAD_BYTES,
  type CreateResult, type ListQuery, type StoredPlant, type PlantStore, type StoreContext
} from './store.ts'

// SQLite answers these when the file, the disk or a lock is the problem, not the
// request: the client should retry later (503), and the service recovers by itself.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CORRUPT|NOTADB|CANTOPEN|READONLY|PROTOCOL)/
// And these when it refuses the data itself (a constraint, a value too big): that plant
// is answered 400, the others of its batch go on.
const REFUSED = /^SQLITE_(CONSTRAINT|TOOBIG|MISMATCH)/

// A lock held by another connection (the sqlite3 shell's write, a backup, another
// process) is waited for this long, off the event loop, trying again every
// LOCK_RETRY_MS. SQLite's own busy timeout waits inside the call, and better-sqlite3 runs
// it on the event loop: at 250 ms a batch, every request waited behind a held lock, not
// only the writes.
const LOCK_PATIENCE_MS = 250
const LOCK_RETRY_MS = 5

interface Row { id: bigint, name: string, tag: string | null }
/** A write waiting for its group commit, and what it is counted as in the write queue. */
interface Write { run: () => unknown, bytes: number }

/**
 * Plants in a SQLite file (or in memory, for tests and demos), in WAL mode. A write is
 * acknowledged only after its transaction is on disk, and nothing is read back to a
 * client before it is on disk either: the WAL is synced off the event loop (WalSync).
 * Writes arriving together share one commit; a created plant's webhook deliveries are
 * written in its transaction.
 */
export class SqliteStore implements PlantStore {
  readonly webhooks: SqliteWebhooks
  readonly #db: Database.Database
  readonly #outage: Outage
  readonly #statements
  readonly #writes: GroupCommit<Write, unknown>
  /** None for a database in memory, which has no disk to wait for. */
  readonly #wal: WalSync | undefined
  /** None for a database in memory, which has no file to lose. */
  readonly #file: FileIdentity | undefined
  /** The read transaction this event-loop turn's reads share is open. */
  #reading = false

  constructor (path: string, { log, maxBatch, maxQueueBytes, onBatch }: StoreContext) {
    if (path !== ':memory:') {
      mkdirSync(dirname(path), { recursive: true })
      // A device or a pipe is no database, and SQLite would write its journal beside it
      // (/dev/null-journal).
      if (statSync(path, { throwIfNoEntry: false })?.isFile() === false) throw new Error('it is not a regular file')
    }
    // Starting, nothing else waits: the schema's migration may wait for the lock inside SQLite.
    this.#db = new Database(path, { timeout: LOCK_PATIENCE_MS })
    this.#outage = new Outage(log, 'SQLite')
    try {
      // Before anything is written to the file: WAL mode is kept in it too.
      refuseForeign(this.#db)
      refuseReadOnly(this.#db)
      // A file system without shared memory (some network ones) leaves SQLite in its
      // rollback journal, which WalSync cannot make durable: refuse to start instead.
      if (this.#db.pragma('journal_mode = WAL', { simple: true }) !== 'wal' && path !== ':memory:') {
        throw new Error(`SQLite cannot use its write-ahead log for ${path} (a file system without shared memory?)`)
      }
      // A commit writes the WAL; WalSync syncs it, off the event loop, before any answer.
      this.#db.pragma('synchronous = NORMAL')
      // SQLite's own default page cache (2 MB), not the 16 MB better-sqlite3 builds it with:
      // the operating system caches the file anyway, and a page read from there costs
      // little, while the larger cache stayed resident (README, Performance).
      this.#db.pragma('cache_size = -2000')
      this.#db.defaultSafeIntegers(true)
      migrate(this.#db)
      // From now on a lock is waited for off the event loop (#unlocked). Reads in WAL
      // mode take no lock a writer holds.
      this.#db.pragma('busy_timeout = 0')
      this.#wal = path === ':memory:' ? undefined : new WalSync(path)
      this.#file = path === ':memory:' ? undefined : new FileIdentity(path)
    } catch (err) {
      this.#db.close()
      throw err
    }
    const db = this.#db
    // `+?`, never a bare `?`, in LIMIT and equal to the first column of an index that is
    // not unique (`tag = +?`): better-sqlite3's SQLite (built with STAT4) plans such a
    // parameter by its bound value, so every run of the statement prepared it again, a
    // sixth of a page of 100's time in the store. `+?` is the same value, planned once.
    // An equality on the rowid or a unique key is planned alike whatever its value, and
    // needs none (README, Performance). `npm run lint` refuses a bare one where it matters.
    this.#statements = {
      insert: db.prepare<[bigint, string, string | null]>('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'),
      get: db.prepare<[bigint], Row>('SELECT id, name, tag FROM plants WHERE id = ?'),
      page: db.prepare<[bigint, number], Row>('SELECT id, name, tag FROM plants WHERE id >= ? ORDER BY id LIMIT +?'),
      pageByTag: db.prepare<[string, bigint, number], Row>('SELECT id, name, tag FROM plants WHERE tag = +? AND id >= ? ORDER BY id LIMIT +?'),
      delete: db.prepare<[bigint]>('DELETE FROM plants WHERE id = ?'),
      ping: db.prepare('SELECT 1'),
      beginReads: db.prepare('BEGIN'),
      endReads: db.prepare('COMMIT'),
      abandonReads: db.prepare('ROLLBACK')
    }
    // All or nothing: a write that throws rolls the whole batch back.
    const transaction = db.transaction((writes: Write[]) => writes.map((write) => write.run()))
    this.#writes = new GroupCommit({
      write: async (writes) => {
        let results
        try {
          results = await this.#unlocked(() => {
            this.#endReads()
            // Inside another transaction, a batch would only be a savepoint, committed with it.
            if (this.#db.inTransaction) throw new Error('a transaction is open where a batch begins')
            this.#stillTheFile()
            return transaction.immediate(writes)
          })
          this.#outage.recover(true)
        } catch (err) {
          this.webhooks.rolledBack()
          if (REFUSED.test(codeOf(err))) throw new PlantRejected({ cause: err })
          throw UNAVAILABLE.test(codeOf(err)) ? this.#outage.fail(err, true) : err
        }
        // Started before anything else runs, so that every read from now on waits for it.
        const synced = this.#wal?.sync()
        // Whatever the sync's fate, the transaction is over: the webhooks' state of it is
        // reset now. The dispatcher this may wake claims through a write of its own,
        // answered after a later sync.
        this.webhooks.committed()
        await this.#durable(synced)
        // Lost while the batch was written: on disk, but in a file no one will open again.
        this.#stillTheFile()
        return results
      },
      sizeOf: (write) => write.bytes,
      maxBatch,
      maxQueueBytes,
      onBatch
    })
    this.webhooks = new SqliteWebhooks(db, this.#write.bind(this), this.#read.bind(this))
  }

  async create (plant: StoredPlant): Promise<CreateResult> {
    return await this.#write(plantBytes(plant), (): CreateResult => {
      if (this.#statements.insert.run(plant.id, plant.name, plant.tag ?? null).changes === 1) {
        this.webhooks.announce(plant)
        return { outcome: 'created', plant }
      }
      const existing = toPlant(this.#statements.get.get(plant.id)!)
      return { outcome: samePlant(existing, plant) ? 'unchanged' : 'conflict', plant: existing }
    })
  }

  async get (id: bigint): Promise<StoredPlant | undefined> {
    const row = await this.#read(() => this.#statements.get.get(id))
    return row === undefined ? undefined : toPlant(row)
  }

  async list ({ limit, after, tag }: ListQuery): Promise<StoredPlant[]> {
    const from = pageStart(after)
    if (from === undefined) return []
    const rows = await this.#read(() => tag === undefined
      ? this.#statements.page.all(from, limit)
      : this.#statements.pageByTag.all(tag, from, limit))
    return rows.map(toPlant)
  }

  async delete (id: bigint): Promise<boolean> {
    return await this.#write(WRITE_OVERHEAD_BYTES, () => this.#statements.delete.run(id).changes === 1)
  }

  async ping (): Promise<void> {
    this.#run(() => this.#statements.ping.get())
    this.#stillTheFile()
  }

  async close (): Promise<void> {
    await this.#writes.drain()
    this.#endReads()
    this.#db.close()
    this.#wal?.close()
  }

  async #write<Result> (bytes: number, run: () => Result): Promise<Result> {
    return await this.#writes.submit({ run, bytes }) as Result
  }

  /** Runs a read, answered once what it may have seen is on disk. */
  async #read<T> (operation: () => T): Promise<T> {
    this.#shareReads()
    const result = this.#run(operation)
    await this.#durable()
    return result
  }

  /**
   * The reads of one event-loop turn share one read transaction. A statement on its own
   * begins and ends one, three system calls (a lock taken and released in the WAL's
   * shared memory, the file's size read) that cost more than finding a plant by its id:
   * reads by id ran about 10% faster sharing them (README, Performance). The
   * transaction ends when the turn does, or before a write begins, so every read after
   * a commit sees it.
   */
  #shareReads (): void {
    if (this.#reading || this.#db.inTransaction) return
    // Not through #run: BEGIN touches no file, so its success says nothing of an outage.
    this.#statements.beginReads.run()
    this.#reading = true
    setImmediate(() => { this.#endReads() })
  }

  #endReads (): void {
    if (!this.#reading) return
    this.#reading = false
    // An I/O error during a read may have rolled it back already.
    if (!this.#db.inTransaction) return
    try {
      this.#statements.endReads.run()
    } catch {
      // It wrote nothing: rolled back, it ends all the same. A COMMIT that failed on a
      // damaged file has ended it already, and a ROLLBACK would throw: from the turn's
      // end, where nothing catches it, that killed the process at every damaged read.
      if (this.#db.inTransaction) this.#statements.abandonReads.run()
    }
  }

  /**
   * Runs a batch's transaction, and again every LOCK_RETRY_MS while another connection
   * holds the write lock, for LOCK_PATIENCE_MS at most; the event loop serves meanwhile.
   * A transaction refused for the lock wrote nothing.
   */
  async #unlocked<T> (transaction: () => T): Promise<T> {
    const giveUp = monotonicMs() + LOCK_PATIENCE_MS
    for (;;) {
      try {
        return transaction()
      } catch (err) {
        if (codeOf(err) !== 'SQLITE_BUSY' || monotonicMs() >= giveUp) throw err
        this.webhooks.rolledBack()
      }
      await sleep(LOCK_RETRY_MS)
    }
  }

  /**
   * A file deleted or replaced under the store takes no writes, until a restart opens
   * the one the path names: reads of what it holds go on.
   */
  #stillTheFile (): void {
    try {
      this.#file?.check()
    } catch (err) {
      throw this.#outage.fail(err, true)
    }
  }

  /**
   * Waits for a sync (by default the one under way, if any): a failed sync is a disk
   * that takes no writes, whoever waited for it.
   */
  async #durable (syncing = this.#wal?.latest): Promise<void> {
    if (syncing === undefined) return
    try {
      await syncing
    } catch (err) {
      throw this.#outage.fail(err, true)
    }
  }

  /**
   * Runs a database call (`writing`: a batch's transaction), turning an unavailable file
   * or disk into StoreUnavailable. Every call tries the file, even during an outage:
   * SQLite fails at once, and the first call that succeeds ends the outage (a write's
   * outage, the first write).
   */
  #run<T> (operation: () => T, writing = false): T {
    try {
      const result = operation()
      this.#outage.recover(writing)
      return result
    } catch (err) {
      if (!UNAVAILABLE.test(codeOf(err))) throw err
      throw this.#outage.fail(err, writing)
    }
  }
}

/**
 * SQLite opens a file it may not write (another owner's, a read-only mount, an immutable
 * file) for reading only, without a word, and every write then fails: the service would
 * start ready and store no plant. A write, rolled back at once, finds out.
 */
function refuseReadOnly (db: Database.Database): void {
  db.exec('BEGIN')
  try {
    db.pragma(`user_version = ${Number(db.pragma('user_version', { simple: true }))}`)
  } catch (err) {
    if (codeOf(err).startsWith('SQLITE_READONLY')) {
      throw new Error('it is read-only to the service (its owner or mode, an immutable attribute, a read-only mount?): no plant could be stored', { cause: err })
    }
    // Another writer's lock says nothing of the file; the first writes meet it as an outage.
    if (!codeOf(err).startsWith('SQLITE_BUSY')) throw err
  } finally {
    // Some errors end the transaction themselves.
    if (db.inTransaction) db.exec('ROLLBACK')
  }
}

function toPlant ({ id, name, tag }: Row): StoredPlant {
  return tag === null ? { id, name } : { id, name, tag }
}
