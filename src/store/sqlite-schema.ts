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
  'CREATE INDEX plants_by_tag ON plants (tag, id)',
  // 3: webhook subscriptions and the outbox of their deliveries. No foreign key: a
  // subscription's deliveries are deleted with it, in the same transaction.
  `CREATE TABLE webhooks (
     id         TEXT PRIMARY KEY,
     url        TEXT NOT NULL,
     secret     TEXT NOT NULL,
     created_at INTEGER NOT NULL
   ) STRICT;
   CREATE TABLE webhook_deliveries (
     seq              INTEGER PRIMARY KEY,
     id               TEXT NOT NULL UNIQUE,
     webhook_id       TEXT NOT NULL,
     plant_id         INTEGER NOT NULL,
     payload          BLOB NOT NULL,
     status           TEXT NOT NULL DEFAULT 'pending',
     attempts         INTEGER NOT NULL DEFAULT 0,
     last_status_code INTEGER,
     last_error       TEXT,
     next_attempt_at  INTEGER,
     lease            TEXT,
     lease_until      INTEGER,
     created_at       INTEGER NOT NULL,
     delivered_at     INTEGER,
     settled_at       INTEGER
   ) STRICT;
   CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, seq);
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (webhook_id, next_attempt_at) WHERE status = 'pending';
   CREATE INDEX webhook_deliveries_settled ON webhook_deliveries (settled_at) WHERE status <> 'pending'`
]

export const SCHEMA_VERSION = migrations.length

// How many of another application's tables a refusal names.
const NAMED_TABLES = 3

/**
 * Refuses another application's database. Version 0 is where the migrations begin, so a
 * file at 0 that already holds tables (SQLite's own aside) was not made by this service:
 * migrating it would add the plant store's tables to that application's, and switch its
 * file to WAL mode. Call before anything is written to the file.
 */
export function refuseForeign (db: Database.Database): void {
  if (Number(db.pragma('user_version', { simple: true })) !== 0) return
  const names = db.prepare<[], string>(
    "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
  ).pluck().all()
  if (names.length === 0) return
  const more = names.length > NAMED_TABLES ? ` and ${names.length - NAMED_TABLES} more` : ''
  throw new Error(`it holds tables that are not the plant store's (${names.slice(0, NAMED_TABLES).join(', ')}${more}) ` +
    'and was left untouched: name a new file, or the plant store\'s own')
}

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
