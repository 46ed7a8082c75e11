import Database from 'better-sqlite3'
import { codeOf } from '../errors.ts'

/** Another connection has the file open: a service runs on it, most likely. */
export class FileInUse extends Error {
  constructor (path: string, options?: ErrorOptions) {
    super(`${path} is open in another process (a running service?): stop it first`, options)
    this.name = 'FileInUse'
  }
}

/**
 * Opens the SQLite file at `path` for this connection alone, or throws FileInUse if another
 * has it open: a running service keeps its file open, so a command that must not run beside one
 * (a restore, a copy into the file) finds out. The lock lasts until the connection closes
 * (PRAGMA locking_mode = EXCLUSIVE), so no service starts on the file meanwhile.
 */
export function openAlone (path: string): Database.Database {
  const db = new Database(path, { fileMustExist: true, timeout: 0 })
  try {
    db.pragma('locking_mode = EXCLUSIVE')
    db.exec('BEGIN EXCLUSIVE; COMMIT')
    return db
  } catch (err) {
    db.close()
    if (codeOf(err).startsWith('SQLITE_BUSY')) {
      throw new FileInUse(path, { cause: err })
    }
    throw err
  }
}
