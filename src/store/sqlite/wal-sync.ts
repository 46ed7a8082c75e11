import { closeSync, fsync, fsyncSync, openSync } from 'node:fs'
import { dirname } from 'node:path'

/**
 * Fsyncs a SQLite write-ahead log on libuv's thread pool, so that synchronous=NORMAL
 * commits are made durable without blocking the event loop as synchronous=FULL would.
 * One fsync covers every commit before it. The WAL stays the same file while the
 * connection is open: SQLite reuses it in place and deletes it only at the last close.
 */
export class WalSync {
  readonly #wal: number
  #latest: Promise<void> | undefined

  constructor (databasePath: string) {
    this.#wal = openSync(`${databasePath}-wal`, 'r')
    // As synchronous=FULL does once: the WAL's directory entry must survive a crash too.
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
