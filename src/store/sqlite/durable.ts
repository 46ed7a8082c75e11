import { setTimeout as sleep } from 'node:timers/promises'
import type Database from 'better-sqlite3'
import { monotonicMs } from '../../process/clock.ts'
import { Commit, Commits } from '../commits.ts'
import { codeOf, PlantRejected } from '../errors.ts'
import { FileIdentity } from './file-identity.ts'
import { GroupCommit } from '../group-commit.ts'
import { Outage } from '../outage.ts'
import type { StoreContext } from '../store.ts'
import { WalSync } from './wal-sync.ts'

// The file, the disk or a lock is the problem, not the request: 503, and the store recovers by itself.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CORRUPT|NOTADB|CANTOPEN|READONLY|PROTOCOL)/
// SQLite refuses the data itself: that plant is answered 400, the others of its batch go on.
const REFUSED = /^SQLITE_(CONSTRAINT|TOOBIG|MISMATCH)/

// Another connection's write lock is retried off the event loop: SQLite's busy timeout
// would wait inside the call, holding every request, reads included.
const LOCK_PATIENCE_MS = 250
const LOCK_RETRY_MS = 5

/** What a transaction's writes did, and whether it has a subscription to announce to, read by its first announce: most stores have none. */
export class SqliteCommit extends Commit {
  subscribed: boolean | undefined
}

/** Runs in a batch's transaction, given the batch's commit and the trace context of the request that submitted it. */
export type Run<Result> = (commit: SqliteCommit, traceContext: string | undefined) => Result

/** A write waiting for its group commit, and what it is counted as in the write queue. */
interface Write { run: Run<unknown>, bytes: number }

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

  /** Told each batch once it is committed and on disk. */
  readonly commits = new Commits()

  constructor (db: Database.Database, path: string, { log, maxBatch, maxQueueBytes, onBatch }: StoreContext) {
    this.#db = db
    this.#outage = new Outage(log, 'SQLite')
    this.#wal = path === ':memory:' ? undefined : new WalSync(path)
    this.#file = path === ':memory:' ? undefined : new FileIdentity(path)
    // All or nothing: a write that throws rolls the whole batch back.
    const transaction = db.transaction((writes: Write[], traceContexts: Array<string | undefined>, commit: SqliteCommit) =>
      writes.map((write, i) => write.run(commit, traceContexts[i])))
    this.#writes = new GroupCommit({
      write: async (writes, traceContexts) => {
        let committed
        try {
          committed = await this.#unlocked(() => {
            // Inside another transaction, a batch would only be a savepoint, committed with it.
            if (db.inTransaction) throw new Error('a transaction is open where a batch begins')
            this.stillTheFile()
            // Each try counts afresh: one rolled back tells nothing.
            const commit = new SqliteCommit()
            return { results: transaction.immediate(writes, traceContexts, commit), commit }
          })
          this.#outage.recover(true)
        } catch (err) {
          if (REFUSED.test(codeOf(err))) throw new PlantRejected({ cause: err })
          throw UNAVAILABLE.test(codeOf(err)) ? this.#outage.fail(err, true) : err
        }
        // Started before anything else runs, so that every read from now on waits for it.
        await this.#durable(this.#wal?.sync())
        // Lost while the batch was written: on disk, but in a file no one will open again.
        this.stillTheFile()
        this.commits.tell(committed.commit)
        return committed.results
      },
      sizeOf: (write) => write.bytes,
      maxBatch,
      maxQueueBytes,
      onBatch
    })
  }

  /** Submits a write to the group commit; resolves with its result once it is on disk. */
  async write<Result> (bytes: number, run: Run<Result>): Promise<Result> {
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
  async #unlocked<T> (transaction: () => T): Promise<T> {
    const giveUp = monotonicMs() + LOCK_PATIENCE_MS
    for (;;) {
      try {
        return transaction()
      } catch (err) {
        if (codeOf(err) !== 'SQLITE_BUSY' || monotonicMs() >= giveUp) throw err
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
