import { mkdirSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { codeOf } from '../errors.ts'
import { migrate, refuseForeign } from './schema.ts'

/** How long opening waits for another connection's lock, inside SQLite (nothing else waits yet). */
const OPEN_LOCK_MS = 250

/** Opens (or creates) the plant database in WAL mode, migrated, its pragmas set. */
export function openDatabase (path: string): Database.Database {
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true })
    // SQLite would write its journal beside a device or a pipe (/dev/null-journal).
    if (statSync(path, { throwIfNoEntry: false })?.isFile() === false) throw new Error('it is not a regular file')
  }
  const db = new Database(path, { timeout: OPEN_LOCK_MS })
  try {
    // Before anything is written to the file: WAL mode is kept in it too.
    refuseForeign(db)
    refuseReadOnly(db)
    // Without shared memory (some network file systems) SQLite stays in its rollback
    // journal, which WalSync cannot make durable.
    if (db.pragma('journal_mode = WAL', { simple: true }) !== 'wal' && path !== ':memory:') {
      throw new Error(`SQLite cannot use its write-ahead log for ${path} (a file system without shared memory?)`)
    }
    // A commit writes the WAL; WalSync syncs it off the event loop before any answer.
    db.pragma('synchronous = NORMAL')
    // SQLite's default 2 MB page cache, not better-sqlite3's 16 MB: the OS caches the file anyway.
    db.pragma('cache_size = -2000')
    db.defaultSafeIntegers(true)
    migrate(db)
    // From now on a lock is waited for off the event loop (SqliteDurable).
    db.pragma('busy_timeout = 0')
    return db
  } catch (err) {
    db.close()
    throw err
  }
}

/**
 * SQLite silently opens a file it may not write read-only, and every write then fails:
 * a write, rolled back at once, finds out before the service says it is ready.
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
