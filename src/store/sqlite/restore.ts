import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import Database from 'better-sqlite3'
import { fileSummary, syncToDisk, type FileSummary } from './backup.ts'
import { FileInUse, openAlone } from './alone.ts'
import { checkStoreFile } from './file-check.ts'
import { latestSeq, restartHistory } from './history.ts'
import { openDatabase } from './open.ts'

// Pending deliveries looked up in the replaced file at a time.
const CHUNK = 1000

/** What a restore found of the file it replaced. */
export type Replaced =
  | { state: 'absent' }
  | { state: 'unreadable', reason: string }
  /** `delivered`: pending in the backup, delivered by the replaced file, so marked delivered. */
  | { state: 'read', latest: number, delivered: number }

export interface RestoreReport {
  restored: FileSummary
  replaced: Replaced
  /** The change feed's history restarts after this seq. */
  restartedThrough: number
}

interface Delivered { id: string, attempts: number, last_status_code: number | null, delivered_at: number, settled_at: number }

const SIDE_FILES = ['-wal', '-shm', '-journal']

/**
 * Puts a backup back in place of the store at `path`, with no service running on it: the
 * file is checked (a plant store's, no newer than the code, whole), migrated, and moved into
 * place under the lock that keeps a service from starting meanwhile. The change feed's
 * history restarts past the replaced file's latest seq (or the backup's, if that file is
 * gone); deliveries the replaced file had delivered are not sent again. No -wal or -shm is
 * left beside it; it keeps the replaced file's mode and owner. Files beside the database (its
 * development token) are left alone.
 */
export function restore (file: string, path: string): RestoreReport {
  if (resolve(file) === resolve(path)) throw new Error(`${file} is the store's own file: restore from a backup elsewhere`)
  if (!existsSync(file)) throw new Error(`${file} does not exist`)
  // A copy of a live file: what its log holds would be lost.
  if ((statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0) > 0) {
    throw new Error(`${file} has a -wal file beside it, which a copy of it would miss: make backups with the backup command`)
  }
  const before = existsSync(path) ? lockReplaced(path) : undefined
  const staging = `${path}.restoring`
  try {
    // On a new machine, the database's folder may not be there yet.
    mkdirSync(dirname(path), { recursive: true })
    removeWithSideFiles(staging)
    copyFileSync(file, staging)
    keepOwnership(staging, path)
    const check = new Database(staging, { fileMustExist: true })
    try {
      checkStoreFile(check, file)
    } finally {
      check.close()
    }
    const db = openDatabase(staging)
    let report: RestoreReport
    try {
      db.pragma('synchronous = FULL')
      report = db.transaction(() => {
        const replaced = readReplaced(db, before)
        const latest = Math.max(latestSeq(db), replaced.state === 'read' ? replaced.latest : 0)
        return { restored: fileSummary(db, staging), replaced, restartedThrough: restartHistory(db, latest) }
      }).immediate()
      db.pragma('wal_checkpoint(TRUNCATE)')
    } finally {
      db.close()
    }
    syncToDisk(staging)
    // The replaced file leaves WAL mode first (its log folded in, then removed), so that
    // no stale -wal of it meets the restored file; a file that cannot is replaced anyway.
    if (typeof before === 'object') {
      try {
        before.pragma('journal_mode = DELETE')
      } catch {}
    }
    for (const suffix of SIDE_FILES) rmSync(`${path}${suffix}`, { force: true })
    renameSync(staging, path)
    syncToDisk(dirname(path))
    return report
  } catch (err) {
    removeWithSideFiles(staging)
    throw err
  } finally {
    // Its lock held to the end: no service started on the file meanwhile.
    if (typeof before === 'object') before.close()
  }
}

/** The replaced file, held for this restore alone; its reason when it cannot be read. Throws when a service has it open. */
function lockReplaced (path: string): Database.Database | string {
  try {
    return openAlone(path)
  } catch (err) {
    if (err instanceof FileInUse) throw err
    return (err as Error).message
  }
}

/** What the replaced file says; marks delivered the pending deliveries of `db` it had delivered. */
function readReplaced (db: Database.Database, before: Database.Database | string | undefined): Replaced {
  if (before === undefined) return { state: 'absent' }
  if (typeof before === 'string') return { state: 'unreadable', reason: before }
  let latest: number
  let delivered: Delivered[]
  try {
    latest = latestSeq(before)
    delivered = deliveredOf(db, before)
  } catch (err) {
    return { state: 'unreadable', reason: (err as Error).message }
  }
  const mark = db.prepare<[Delivered], { webhook_id: string }>(`UPDATE webhook_deliveries SET status = 'delivered', attempts = @attempts,
    last_status_code = @last_status_code, last_error = NULL, next_attempt_at = NULL, delivered_at = @delivered_at, settled_at = @settled_at,
    lease = NULL, lease_until = NULL WHERE id = @id AND status = 'pending' RETURNING webhook_id`)
  const settled = db.prepare<[string]>('UPDATE webhooks SET pending = pending - 1 WHERE id = ?')
  let count = 0
  for (const delivery of delivered) {
    const row = mark.get(delivery)
    if (row === undefined) continue
    settled.run(row.webhook_id)
    count++
  }
  return { state: 'read', latest, delivered: count }
}

/** The deliveries pending in `db` that `replaced` records as delivered, looked up a chunk at a time. */
function deliveredOf (db: Database.Database, replaced: Database.Database): Delivered[] {
  const pending = db.prepare<[bigint, number], { seq: bigint, id: string }>(
    "SELECT seq, id FROM webhook_deliveries WHERE status = 'pending' AND seq > ? ORDER BY seq LIMIT +?")
  const delivered = replaced.prepare<[string], Delivered>(`SELECT id, attempts, last_status_code, delivered_at, settled_at FROM webhook_deliveries
    WHERE status = 'delivered' AND id IN (SELECT value FROM json_each(?))`)
  const found: Delivered[] = []
  for (let rows = pending.all(0n, CHUNK); rows.length > 0; rows = pending.all(rows.at(-1)!.seq, CHUNK)) {
    found.push(...delivered.all(JSON.stringify(rows.map((row) => row.id))))
  }
  return found
}

/** Gives the staged file the replaced file's mode and owner (the owner if allowed: as root), or mode 0600 when there is none. */
function keepOwnership (staged: string, path: string): void {
  const replaced = statSync(path, { throwIfNoEntry: false })
  chmodSync(staged, replaced === undefined ? 0o600 : replaced.mode & 0o7777)
  if (replaced === undefined) return
  try {
    chownSync(staged, replaced.uid, replaced.gid)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') throw err
  }
}

function removeWithSideFiles (path: string): void {
  for (const suffix of ['', ...SIDE_FILES]) rmSync(`${path}${suffix}`, { force: true })
}
