import { rmSync, statSync } from 'node:fs'
import Database from 'better-sqlite3'
import { databaseConfig } from '../src/config.ts'
import { FileInUse, openAlone } from '../src/store/sqlite/alone.ts'
import { refuseForeign } from '../src/store/sqlite/schema.ts'
import { devTokenFile } from '../src/tokens/dev-token.ts'

// `npm run start:empty`, before it starts the service: deletes the SQLite store DATABASE_URL
// names (data/plants.db by default), its write-ahead log and shared memory, and keeps the
// development token beside them, so that a shell's $TOKEN goes on working. Only the plant
// store's own database is deleted: another application's file is refused, as the service refuses it,
// and so is a file a running service has open.

function fail (message: string): never {
  process.stderr.write(`plant-store: cannot empty the store: ${message}\n`)
  process.exit(1)
}

let store
try {
  store = databaseConfig(process.env)
} catch (err) {
  fail((err as Error).message)
}
if (store.engine === 'postgres') fail('DATABASE_URL names PostgreSQL; npm run start:empty empties a SQLite store only (drop and create the database instead)')
if (store.engine === 'memory' || store.path === ':memory:') process.exit(0) // empty at every start already

const { path } = store
if (statSync(path, { throwIfNoEntry: false }) !== undefined) {
  let db
  try {
    db = new Database(path, { readonly: true, fileMustExist: true })
    refuseForeign(db)
    db.close()
    // Ours, but not while a service runs on it: that service would take no more writes.
    db = openAlone(path)
  } catch (err) {
    fail(err instanceof FileInUse ? err.message : `${path}: ${(err as Error).message}`)
  } finally {
    db?.close()
  }
}
for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true })
process.stderr.write(`plant-store: emptied ${path}; the development token stays in ${devTokenFile(store)}\n`)
