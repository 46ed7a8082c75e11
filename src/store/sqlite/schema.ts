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
  // subscription's deliveries are deleted after it, a chunk at a time (OutboxCleanup).
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
   CREATE INDEX webhook_deliveries_settled ON webhook_deliveries (settled_at) WHERE status <> 'pending'`,
  // 4: each event's payload once, in webhook_events, not once per subscription (a
  // delivery's own payload column is left empty); a payload NULL is a deleted plant's.
  // Per subscription, a counter of its pending deliveries (so that a create never counts
  // them), and, past the bound, when it was disabled and the first event it missed.
  `CREATE TABLE webhook_events (
     seq        INTEGER PRIMARY KEY,
     plant_id   INTEGER NOT NULL,
     payload    BLOB,
     created_at INTEGER NOT NULL
   ) STRICT;
   INSERT INTO webhook_events (plant_id, payload, created_at)
     SELECT plant_id, payload, min(created_at) FROM webhook_deliveries GROUP BY plant_id, payload ORDER BY min(seq);
   CREATE INDEX webhook_events_plant ON webhook_events (plant_id);
   ALTER TABLE webhook_deliveries ADD COLUMN event_seq INTEGER NOT NULL DEFAULT 0;
   UPDATE webhook_deliveries SET payload = X'', event_seq = (SELECT seq FROM webhook_events
     WHERE webhook_events.plant_id = webhook_deliveries.plant_id AND webhook_events.payload = webhook_deliveries.payload);
   CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_seq);
   ALTER TABLE webhooks ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE webhooks ADD COLUMN disabled_at INTEGER;
   ALTER TABLE webhooks ADD COLUMN missed_since INTEGER;
   ALTER TABLE webhooks ADD COLUMN missed_from INTEGER;
   ALTER TABLE webhooks ADD COLUMN replay_from INTEGER;
   ALTER TABLE webhooks ADD COLUMN replay_to INTEGER;
   UPDATE webhooks SET pending = (SELECT count(*) FROM webhook_deliveries WHERE webhook_id = webhooks.id AND status = 'pending')`,
  // 5: each event's type, and the events each subscription chooses (a bit set: see
  // eventBit); a plant's pending deliveries found by plant, to send them in order.
  `ALTER TABLE webhook_events ADD COLUMN type TEXT NOT NULL DEFAULT 'plant.created';
   ALTER TABLE webhooks ADD COLUMN events INTEGER NOT NULL DEFAULT 1;
   CREATE INDEX webhook_deliveries_plant ON webhook_deliveries (webhook_id, plant_id, seq) WHERE status = 'pending'`,
  // 6: the events are the change feed: AUTOINCREMENT, so that a seq is never issued twice
  // (a table pruned empty would start again at 1), and the feed's horizon, the last seq
  // pruned, so that a cursor before it is refused rather than silently skipping events.
  `ALTER TABLE webhook_events RENAME TO webhook_events_before_7;
   CREATE TABLE webhook_events (
     seq        INTEGER PRIMARY KEY AUTOINCREMENT,
     plant_id   INTEGER NOT NULL,
     payload    BLOB,
     created_at INTEGER NOT NULL,
     type       TEXT NOT NULL DEFAULT 'plant.created'
   ) STRICT;
   INSERT INTO webhook_events (seq, plant_id, payload, created_at, type)
     SELECT seq, plant_id, payload, created_at, type FROM webhook_events_before_7 ORDER BY seq;
   DROP TABLE webhook_events_before_7;
   CREATE INDEX webhook_events_plant ON webhook_events (plant_id);
   CREATE TABLE event_horizon (
     id             INTEGER PRIMARY KEY CHECK (id = 1),
     pruned_through INTEGER NOT NULL
   ) STRICT;
   INSERT INTO event_horizon (id, pruned_through) VALUES (1, 0)`,
  // 7: the W3C traceparent of the request that made each change, when traced: its
  // deliveries' traces link to it after a restart too. NULL when tracing is off.
  'ALTER TABLE webhook_events ADD COLUMN trace_context TEXT',
  // 8: the last seq of an earlier history, when the store was moved or restored (see
  // restartHistory): a cursor before it is refused as from that history, not as pruned.
  'ALTER TABLE event_horizon ADD COLUMN restarted_through INTEGER NOT NULL DEFAULT 0',
  // 9: the Idempotency-Keys of subscribes, per token (a digest of it): the subscription a
  // key's request created, or, while it runs, the lease it holds the key by. Kept 24 hours.
  `CREATE TABLE idempotency_keys (
     scope           TEXT NOT NULL,
     key             TEXT NOT NULL,
     fingerprint     TEXT NOT NULL,
     subscription_id TEXT,
     lease           TEXT,
     leased_at       INTEGER,
     created_at      INTEGER NOT NULL,
     PRIMARY KEY (scope, key)
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX idempotency_keys_by_scope ON idempotency_keys (scope, created_at);
   CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at)`,
  // 10: a deleted plant's events before its deletion, erased in the background a chunk at
  // a time (erased_through: how far), read as erased meanwhile; a plant's pending
  // deliveries found in the order of their events, whether queued live or by a replay.
  `CREATE TABLE plant_erasures (
     plant_id       INTEGER NOT NULL,
     before_seq     INTEGER NOT NULL,
     erased_through INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (plant_id, before_seq)
   ) STRICT, WITHOUT ROWID;
   DROP INDEX webhook_deliveries_plant;
   CREATE INDEX webhook_deliveries_plant ON webhook_deliveries (webhook_id, plant_id, event_seq) WHERE status = 'pending'`
]

export const SCHEMA_VERSION = migrations.length

// The plant store's mark in the file's header, where SQLite keeps an application's own
// (PRAGMA application_id): "PlSt" in ASCII. Files made before the store set it hold 0;
// their version and tables tell whose they are.
export const APPLICATION_ID = 0x506c5374

// How many of another application's tables a refusal names.
const NAMED_TABLES = 3

const LEFT_UNTOUCHED = "and was left untouched: name a new file, or the plant store's own"

/** The tables the migrations up to `version` make, in the order they make them. */
function tablesAt (version: number): string[] {
  // A table made again (webhook_events in 6) is named once.
  return [...new Set(migrations.slice(0, version).flatMap((sql) => [...sql.matchAll(/CREATE TABLE (\w+)/g)].map(([, name]) => name)))]
}

/**
 * Refuses another application's database before anything is written to it. The store's
 * files carry APPLICATION_ID; one without it is the store's only if new or holding every
 * table its user_version says (other applications number their schemas there too).
 */
export function refuseForeign (db: Database.Database): void {
  const id = Number(db.pragma('application_id', { simple: true }))
  if (id === APPLICATION_ID) return
  if (id !== 0) {
    throw new Error(`its PRAGMA application_id is 0x${(id >>> 0).toString(16)}, not the plant store's, ${LEFT_UNTOUCHED}`)
  }
  const version = Number(db.pragma('user_version', { simple: true }))
  const names = db.prepare<[], string>(
    "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
  ).pluck().all()
  const missing = tablesAt(Math.min(version, SCHEMA_VERSION)).filter((name) => !names.includes(name))
  if ((version === 0 && names.length === 0) || (version > 0 && missing.length === 0)) return
  const ours = tablesAt(SCHEMA_VERSION)
  const others = names.filter((name) => !ours.includes(name))
  if (others.length === 0) {
    throw new Error(`it is at schema version ${version} (PRAGMA user_version) without the plant store's tables of that version (${missing.join(', ')}) ${LEFT_UNTOUCHED}`)
  }
  const more = others.length > NAMED_TABLES ? ` and ${others.length - NAMED_TABLES} more` : ''
  throw new Error(`it holds tables that are not the plant store's (${others.slice(0, NAMED_TABLES).join(', ')}${more}) ${LEFT_UNTOUCHED}`)
}

/** Brings the database up to SCHEMA_VERSION and marks it the store's; refuses a database newer than this code. */
export function migrate (db: Database.Database): void {
  const current = Number(db.pragma('user_version', { simple: true }))
  if (current > SCHEMA_VERSION) {
    throw new Error(`the database is at schema version ${current}, newer than this service's ${SCHEMA_VERSION}`)
  }
  for (let version = current + 1; version <= SCHEMA_VERSION; version++) {
    db.transaction(() => {
      db.exec(migrations[version - 1])
      db.pragma(`user_version = ${version}`)
      db.pragma(`application_id = ${APPLICATION_ID}`)
    }).immediate()
  }
  // A file the store made before it set its mark.
  if (Number(db.pragma('application_id', { simple: true })) !== APPLICATION_ID) db.pragma(`application_id = ${APPLICATION_ID}`)
}
