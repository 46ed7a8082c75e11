import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { checkStoreFile } from './file-check.ts'
import { latestSeq } from './history.ts'
import { refuseForeign } from './schema.ts'

// How long the backup's read waits for a lock (a checkpoint's, briefly): a WAL reader never waits for writers.
const BUSY_MS = 5000

/** What a store file holds, as a backup or a restore reports it. */
export interface FileSummary {
  schemaVersion: number
  plants: number
  subscriptions: number
  pendingDeliveries: number
  /** The newest seq of its change feed. */
  latest: number
  bytes: number
}

/** Counts what a store's file holds (the connection's view of it). */
export function fileSummary (db: Database.Database, path: string): FileSummary {
  const count = (sql: string): number => Number(db.prepare<[], number | bigint>(sql).pluck().get())
  return {
    schemaVersion: Number(db.pragma('user_version', { simple: true })),
    plants: count('SELECT count(*) FROM plants'),
    subscriptions: count('SELECT count(*) FROM webhooks'),
    pendingDeliveries: count("SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'"),
    latest: latestSeq(db),
    bytes: statSync(path).size
  }
}

/** Syncs a file, or a directory's entries, to disk. */
export function syncToDisk (path: string): void {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Copies the store at `path` into a new file, `file`, while the service goes on writing:
 * VACUUM INTO reads one snapshot in one statement (in WAL mode, beside the writer, not
 * blocking it; an incremental backup would start over at each commit of the service). The
 * copy is a single file (no -wal), mode 0600, synced, named `file` only once whole and checked.
 */
export function backup (path: string, file: string): FileSummary {
  if (existsSync(file)) throw new Error(`${file} exists already: name a new file`)
  if (!existsSync(path)) throw new Error(`${path} does not exist: there is no store to back up`)
  const partial = `${file}.partial`
  rmSync(partial, { force: true })
  // VACUUM INTO fills an empty file: made first, readable by its owner alone, as it holds the webhooks' secrets.
  writeFileSync(partial, '', { mode: 0o600 })
  const source = new Database(path, { fileMustExist: true, timeout: BUSY_MS })
  try {
    refuseForeign(source)
    source.prepare('VACUUM INTO ?').run(partial)
  } catch (err) {
    rmSync(partial, { force: true })
    throw err
  } finally {
    source.close()
  }
  try {
    syncToDisk(partial)
    const copy = new Database(partial, { fileMustExist: true })
    let summary: FileSummary
    try {
      checkStoreFile(copy, file)
      summary = fileSummary(copy, partial)
    } finally {
      copy.close()
    }
    renameSync(partial, file)
    syncToDisk(dirname(file))
    return summary
  } catch (err) {
    rmSync(partial, { force: true })
    throw err
  }
}
