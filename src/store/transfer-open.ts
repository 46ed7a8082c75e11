import { existsSync } from 'node:fs'
import type { DatabaseConfig } from './open.ts'
import { latestSeq as postgresLatest, lockEvents, restartHistory as postgresRestart } from './postgres/history.ts'
import { PostgresLoad, PostgresSnapshot } from './postgres/transfer.ts'
import { openSession } from './postgres/session.ts'
import { FileInUse, openAlone } from './sqlite/alone.ts'
import { latestSeq as sqliteLatest, restartHistory as sqliteRestart } from './sqlite/history.ts'
import { SqliteLoad, SqliteSnapshot } from './sqlite/transfer.ts'
import { openDatabase } from './sqlite/open.ts'
import type { StoreLoad, StoreSnapshot } from './transfer.ts'

// The engine behind each DATABASE_URL, for the store's commands (copy, mark-restored).

/** A snapshot of the store `database` names, which must exist. */
export async function openSnapshot (database: DatabaseConfig): Promise<StoreSnapshot> {
  switch (database.engine) {
    case 'memory': throw new Error('memory: keeps nothing beyond its process: there is nothing to copy')
    case 'sqlite':
      if (!existsSync(database.path)) throw new Error(`${database.path} does not exist: there is no store to copy`)
      return named(database.path, 'copied from', () => new SqliteSnapshot(database.path))
    case 'postgres': return await PostgresSnapshot.open(database.url)
  }
}

/** A load into the store `database` names (a SQLite file is created if need be; none may have it open). */
export async function openLoad (database: DatabaseConfig): Promise<StoreLoad> {
  switch (database.engine) {
    case 'memory': throw new Error('memory: keeps nothing beyond its process: name a file or a PostgreSQL database to copy to')
    case 'sqlite':
      if (existsSync(database.path)) refuseInUse(database.path)
      return named(database.path, 'copied to', () => new SqliteLoad(database.path))
    case 'postgres': return await PostgresLoad.open(database.url)
  }
}

/** SQLite's refusals name no file: this one names it. */
function named<T> (path: string, what: string, open: () => T): T {
  try {
    return open()
  } catch (err) {
    throw new Error(`${path} cannot be ${what}: ${(err as Error).message}`, { cause: err })
  }
}

/** Throws FileInUse when another process has the file open; what else is wrong with it, opening it says. */
function refuseInUse (path: string): void {
  try {
    openAlone(path).close()
  } catch (err) {
    if (err instanceof FileInUse) throw err
  }
}

/**
 * Restarts the change feed's history of a store restored by other means (pg_restore, a
 * file-system snapshot), past the newest seq it holds; returns that seq and where the new history starts after.
 */
export async function markRestored (database: DatabaseConfig): Promise<{ latest: number, restartedThrough: number }> {
  switch (database.engine) {
    case 'memory': throw new Error('memory: keeps nothing beyond its process: there is no history to restart')
    case 'sqlite': {
      if (!existsSync(database.path)) throw new Error(`${database.path} does not exist`)
      const db = openDatabase(database.path)
      try {
        db.pragma('synchronous = FULL')
        return db.transaction(() => {
          const latest = sqliteLatest(db)
          return { latest, restartedThrough: sqliteRestart(db, latest) }
        }).immediate()
      } finally {
        db.close()
      }
    }
    case 'postgres': {
      const { client, close } = await openSession(database.url)
      try {
        await client.query('BEGIN ISOLATION LEVEL READ COMMITTED')
        await lockEvents(client)
        const latest = await postgresLatest(client)
        const restartedThrough = await postgresRestart(client, latest)
        await client.query('COMMIT')
        return { latest, restartedThrough }
      } finally {
        await close()
      }
    }
  }
}
