import { setTimeout as sleep } from 'node:timers/promises'
import type Database from 'better-sqlite3'
import { monotonicMs } from '../process/clock.ts'
import { codeOf, PlantRejected } from './errors.ts'
import { FileIdentity } from './file-identity.ts'
import { GroupCommit } from './group-commit.ts'
import { Outage } from './outage.ts'
import type { StoreContext } from './store.ts'
import { WalSync } from './wal-sync.ts'

// The file, the disk or a lock is the problem, not the request: 503, and the store recovers by itself.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CORRUPT|NOTADB|CANTOPEN|READONLY|PROTOCOL)/
// SQLite refuses the data itself: that plant is answered 400, the others of its batch go on.
const REFUSED = /^SQLITE_(CONSTRAINT|TOOBIG|MISMATCH)/

// Another connection's write lock is retried off the event loop: SQLite's busy timeout
// would wait inside the call, holding every request, reads included.
const LOCK_PATIENCE_MS = 250
const LOCK_RETRY_MS = 5

/** A write waiting for its group commit, and what it is counted as in the write queue. */
interface Write { run: () => unknown, bytes: number }

/** What the webhook outbox is told of each batch's transaction. */
export interface BatchListener {
  rolledBack: () => void
  committed: () => void
}

/**
 * Reads and writes on a SQLite connection, answered only once on disk: writes share a
 * group commit whose WAL is synced off the event loop, and a read waits for the sync
 * under way, since it may have seen a commit not yet on disk.
 */
export class SqliteDurable {
  readonly #db: Database.Database
  readonly #outage: Outage
  readonly #writes: GroupCommit<Write, unknown>
  /** None in memory: no disk to wait for, no file to lose. */
  readonly #wal: WalSync | undefined
  readonly #file: FileIdentity | undefined

  constructor (db: Database.Database, path: string, { log, maxBatch, maxQueueBytes, onBatch }: StoreContext, batches: BatchListener) {
    this.#db = db
    this.#outage = new Outage(log, 'SQLite')
    this.#wal = path === ':memory:' ? undefined : new WalSync(path)
    this.#file = path === ':memory:' ? undefined : new FileIdentity(path)
    // All or nothing: a write that throws rolls the whole batch back.
    const transaction = db.transaction((writes: Write[]) => writes.map((write) => write.run()))
    this.#writes = new GroupCommit({
      write: async (writes) => {
        let results
        try {
          results = await this.#unlocked(() => {
            // Inside another transaction, a batch would only be a savepoint, committed with it.
            if (db.inTransaction) throw new Error('a transaction is open where a batch begins')
            this.stillTheFile()
            return transaction.immediate(writes)
          }, batches)
          this.#outage.recover(true)
        } catch (err) {
          batches.rolledBack()
          if (REFUSED.test(codeOf(err))) throw new PlantRejected({ cause: err })
          throw UNAVAILABLE.test(codeOf(err)) ? this.#outage.fail(err, true) : err
        }
        // Started before anything else runs, so that every read from now on waits for it.
        const synced = this.#wal?.sync()
        batches.committed()
        await this.#durable(synced)
        // Lost while the batch was written: on disk, but in a file no one will open again.
        this.stillTheFile()
        return results
      },
      sizeOf: (write) => write.bytes,
      maxBatch,
      maxQueueBytes,
      onBatch
    })
  }

  /** Submits a write to the group commit; resolves with its result once it is on disk. */
  async write<Result> (bytes: number, run: () => Result): Promise<Result> {
    return await this.#writes.submit({ run, bytes }) as Result
  }

  /**
   * Runs a read (each statement its own WAL snapshot), answered once what it may have
   * seen is on disk.
   */
  async read<T> (operation: () => T): Promise<T> {
    const result = this.run(operation)
    // Most reads find no sync under way: they skip the wait, not only its outcome.
    const syncing = this.#wal?.latest
    if (syncing !== undefined) await this.#durable(syncing)
    return result
  }

  /**
   * Runs a database call, an unavailable file or disk turned into StoreUnavailable. Every
   * call tries the file, even during an outage: the first that succeeds ends it.
   */
  run<T> (operation: () => T): T {
    try {
      const result = operation()
      this.#outage.recover()
      return result
    } catch (err) {
      if (!UNAVAILABLE.test(codeOf(err))) throw err
      throw this.#outage.fail(err)
    }
  }

  /** A file deleted or replaced under the store takes no writes; reads of what it holds go on. */
  stillTheFile (): void {
    try {
      this.#file?.check()
    } catch (err) {
      throw this.#outage.fail(err, true)
    }
  }

  async close (): Promise<void> {
    await this.#writes.drain()
    this.#db.close()
    this.#wal?.close()
  }

  /** Runs a batch's transaction again every LOCK_RETRY_MS while another connection holds the lock. */
  async #unlocked<T> (transaction: () => T, batches: BatchListener): Promise<T> {
    const giveUp = monotonicMs() + LOCK_PATIENCE_MS
    for (;;) {
      try {
        return transaction()
      } catch (err) {
        if (codeOf(err) !== 'SQLITE_BUSY' || monotonicMs() >= giveUp) throw err
        batches.rolledBack()
      }
      await sleep(LOCK_RETRY_MS)
    }
  }

  /** Waits for a sync (by default the one under way): a failed sync is a disk that takes no writes. */
  async #durable (syncing = this.#wal?.latest): Promise<void> {
    if (syncing === undefined) return
    try {
      await syncing
    } catch (err) {
      throw this.#outage.fail(err, true)
    }
  }
}
