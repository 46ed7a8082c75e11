import { closeSync, fsync, fsyncSync, openSync } from 'node:fs'
import { dirname } from 'node:path'

/**
 * Syncs a SQLite database's write-ahead log off the event loop. The connection commits
 * with synchronous=NORMAL, which writes a transaction's frames to the WAL without
 * waiting for the disk; `sync` then has the WAL fsynced on libuv's thread pool, and the
 * main thread goes on parsing and validating the next requests meanwhile, where
 * synchronous=FULL would have blocked it for the whole fsync.
 *
 * The store answers nothing before the disk has it: a write waits for the sync started
 * after its commit, and a read for the sync under way when it read (`latest`), since it
 * may have seen a commit that is not on disk yet. A client is told exactly what
 * synchronous=FULL would have told it.
 *
 * One fsync covers every frame written before it, so a sync stands for all the commits
 * before it. The WAL is the same file for as long as the connection is open: SQLite
 * truncates or reuses it in place and deletes it only when the last connection closes.
 */
export class WalSync {
  readonly #wal: number
  #latest: Promise<void> | undefined

  constructor (databasePath: string) {
    this.#wal = openSync(`${databasePath}-wal`, 'r')
    // SQLite with synchronous=FULL syncs the WAL's directory once it creates the file,
    // so that the file itself survives a crash; so does this, once.
    const directory = openSync(dirname(databasePath), 'r')
    try {
      fsyncSync(directory)
    } finally {
      closeSync(directory)
    }
  }

  /** Starts syncing everything committed so far; to be called right after a commit, before anything reads. */
  sync (): Promise<void> {
    const syncing = new Promise<void>((resolve, reject) => {
      fsync(this.#wal, (err) => { if (err === null) resolve(); else reject(err) })
    })
    this.#latest = syncing
    const settled = (): void => { if (this.#latest === syncing) this.#latest = undefined }
    syncing.then(settled, settled)
    return syncing
  }

  /** The sync under way, which everything committed so far waits for; none: all of it is on disk. */
  get latest (): Promise<void> | undefined {
    return this.#latest
  }

  close (): void {
    closeSync(this.#wal)
  }
}
