import type Database from 'better-sqlite3'

// Each entry moves the schema one version up; the version reached is kept in
// PRAGMA user_version, in the same transaction as the change. Append, never edit.
const migrations: string[] = [
  // 1: the plants. INTEGER PRIMARY KEY is the rowid: a signed 64-bit key, exactly int64.
  `CREATE TABLE plants (
     id   INTEGER PRIMARY KEY,
     name TEXT NOT NULL,
     tag  TEXT
   ) STRICT`,
  // 2: listing by tag pages through an index range, as listing by id does through the rowid.
  'CREATE INDEX plants_by_tag ON plants (tag, id)'
]

export const SCHEMA_VERSION = migrations.length

/** Brings the database up to SCHEMA_VERSION; refuses a database newer than this code. */
export function migrate (db: Database.Database): void {
  const current = Number(db.pragma('user_version', { simple: true }))
  if (current > SCHEMA_VERSION) {
    throw new Error(`the database is at schema version ${current}, newer than this service's ${SCHEMA_VERSION}`)
  }
  for (let version = current + 1; version <= SCHEMA_VERSION; version++) {
    db.transaction(() => {
      db.exec(migrations[version - 1])
      db.pragma(`user_version = ${version}`)
    }).immediate()
  }
}
