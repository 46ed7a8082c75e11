import type pg from 'pg'
import { STATEMENT_TIMEOUT_MS } from './connection.ts'

// Each entry moves the schema one version up; every version reached is recorded in
// plant_store_migrations, in the same transaction as the change. Append, never edit.
const migrations: string[] = [
  // 1: the plants. Names and tags are their UTF-8 bytes: a JSON string may hold U+0000,
  // which PostgreSQL's text cannot, and bytea keeps every string exactly.
  `CREATE TABLE plants (
     id   bigint PRIMARY KEY,
     name bytea NOT NULL,
     tag  bytea
   )`,
  // 2: listing by tag pages through an index range, as listing by id does through the key.
  'CREATE INDEX plants_by_tag ON plants (tag, id)',
  // 3: a btree entry holds about 2.7 kB at most, so the index holds the tag's md5; the
  // statistics tell the planner the tag decides its md5, so a page is an index range.
  `CREATE INDEX plants_by_tag_hash ON plants (md5(tag), id);
   CREATE STATISTICS plants_tag_decides_hash (dependencies) ON tag, md5(tag) FROM plants;
   DROP INDEX plants_by_tag`,
  // 4: webhook subscriptions and the outbox of their deliveries. No foreign key: a
  // subscription's deliveries are deleted with it, and a create racing that delete must
  // not be refused for it; a delivery left without its subscription is never claimed.
  `CREATE TABLE webhooks (
     seq        bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
     id         text PRIMARY KEY,
     url        text NOT NULL,
     secret     text NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now()
   );
   CREATE TABLE webhook_deliveries (
     seq              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     id               text NOT NULL UNIQUE,
     webhook_id       text NOT NULL,
     plant_id         bigint NOT NULL,
     payload          bytea NOT NULL,
     status           text NOT NULL DEFAULT 'pending',
     attempts         integer NOT NULL DEFAULT 0,
     last_status_code integer,
     last_error       text,
     next_attempt_at  timestamptz,
     lease            text,
     lease_until      timestamptz,
     created_at       timestamptz NOT NULL DEFAULT now(),
     delivered_at     timestamptz,
     settled_at       timestamptz
   );
   CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, seq);
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (webhook_id, next_attempt_at) WHERE status = 'pending';
   CREATE INDEX webhook_deliveries_settled ON webhook_deliveries (settled_at) WHERE status <> 'pending'`,
  // 5: each event's payload once, in webhook_events, not once per subscription; a payload
  // NULL is a deleted plant's. Per subscription, a counter of its pending deliveries (so
  // that a create never counts them), and, past the bound, when it was disabled and the
  // first event it missed.
  `CREATE TABLE webhook_events (
     seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     plant_id   bigint NOT NULL,
     payload    bytea,
     created_at timestamptz NOT NULL DEFAULT now()
   );
   INSERT INTO webhook_events (plant_id, payload, created_at)
     SELECT plant_id, payload, min(created_at) FROM webhook_deliveries GROUP BY plant_id, payload ORDER BY min(seq);
   CREATE INDEX webhook_events_plant ON webhook_events (plant_id);
   ALTER TABLE webhook_deliveries ADD COLUMN event_seq bigint;
   UPDATE webhook_deliveries SET event_seq = webhook_events.seq FROM webhook_events
     WHERE webhook_events.plant_id = webhook_deliveries.plant_id AND webhook_events.payload = webhook_deliveries.payload;
   ALTER TABLE webhook_deliveries ALTER COLUMN event_seq SET NOT NULL, DROP COLUMN payload;
   CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_seq);
   ALTER TABLE webhooks ADD COLUMN pending bigint NOT NULL DEFAULT 0, ADD COLUMN disabled_at timestamptz,
     ADD COLUMN missed_since timestamptz, ADD COLUMN missed_from bigint, ADD COLUMN replay_from bigint, ADD COLUMN replay_to bigint;
   UPDATE webhooks SET pending = (SELECT count(*) FROM webhook_deliveries WHERE webhook_id = webhooks.id AND status = 'pending')`,
  // 6: each event's type, and the events each subscription chooses (a bit set: see
  // eventBit); a plant's pending deliveries found by plant, to send them in order.
  `ALTER TABLE webhook_events ADD COLUMN type text NOT NULL DEFAULT 'plant.created';
   ALTER TABLE webhooks ADD COLUMN events integer NOT NULL DEFAULT 1;
   CREATE INDEX webhook_deliveries_plant ON webhook_deliveries (webhook_id, plant_id, seq) WHERE status = 'pending'`,
  // 7: the change feed's horizon: the last seq pruned, so that a cursor before it is
  // refused rather than silently skipping events.
  `CREATE TABLE event_horizon (
     id             integer PRIMARY KEY CHECK (id = 1),
     pruned_through bigint NOT NULL
   );
   INSERT INTO event_horizon (id, pruned_through) VALUES (1, 0)`,
  // 8: the W3C traceparent of the request that made each change, when traced: its
  // deliveries' traces link to it whichever instance attempts them. NULL when tracing is off.
  'ALTER TABLE webhook_events ADD COLUMN trace_context text',
  // 9: the last seq of an earlier history, when the store was moved or restored (see
  // restartHistory): a cursor before it is refused as from that history, not as pruned.
  'ALTER TABLE event_horizon ADD COLUMN restarted_through bigint NOT NULL DEFAULT 0',
  // 10: the Idempotency-Keys of subscribes, per token (a digest of it): the subscription a
  // key's request created, or, while it runs, the lease it holds the key by. Kept 24 hours.
  `CREATE TABLE idempotency_keys (
     scope           text NOT NULL,
     key             text NOT NULL,
     fingerprint     text NOT NULL,
     subscription_id text,
     lease           text,
     leased_at       timestamptz,
     created_at      timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (scope, key)
   );
   CREATE INDEX idempotency_keys_by_scope ON idempotency_keys (scope, created_at);
   CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at)`,
  // 11: a deleted plant's events before its deletion, erased in the background a chunk at
  // a time (erased_through: how far), read as erased meanwhile; a plant's pending
  // deliveries found in the order of their events, whether queued live or by a replay.
  `CREATE TABLE plant_erasures (
     plant_id       bigint NOT NULL,
     before_seq     bigint NOT NULL,
     erased_through bigint NOT NULL DEFAULT 0,
     PRIMARY KEY (plant_id, before_seq)
   );
   DROP INDEX webhook_deliveries_plant;
   CREATE INDEX webhook_deliveries_plant ON webhook_deliveries (webhook_id, plant_id, event_seq) WHERE status = 'pending'`
]

export const SCHEMA_VERSION = migrations.length

// Any fixed number, the same in every instance: instances starting together take turns.
const MIGRATION_LOCK = '7140531842950291127'

/**
 * Brings the database up to SCHEMA_VERSION in one transaction, under an advisory lock
 * so that instances starting at once migrate one after another; refuses a database
 * newer than this code.
 */
export async function migrate (pool: pg.Pool): Promise<void> {
  const client = await pool.connect()
  // A connection lost mid-migration also fails the query in flight, which reports it;
  // unheard, the client's 'error' event would end the process.
  const ignore = (): void => {}
  client.on('error', ignore)
  try {
    // Read committed whatever the database's default: each statement then sees what the
    // instance that held the lock before committed, not a snapshot from before the wait.
    // Each statement is timed, as every statement of the store is, by a setting of the transaction's own.
    await client.query(`BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL statement_timeout = ${STATEMENT_TIMEOUT_MS}`)
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    await client.query(`CREATE TABLE IF NOT EXISTS plant_store_migrations (
      version    integer PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
    const { rows } = await client.query<{ version: number }>('SELECT coalesce(max(version), 0) AS version FROM plant_store_migrations')
    const current = rows[0].version
    if (current > SCHEMA_VERSION) {
      throw new Error(`the database is at schema version ${current}, newer than this service's ${SCHEMA_VERSION}`)
    }
    for (let version = current + 1; version <= SCHEMA_VERSION; version++) {
      await client.query(migrations[version - 1])
      await client.query('INSERT INTO plant_store_migrations (version) VALUES ($1)', [version])
    }
    await client.query('COMMIT')
    client.release()
  } catch (err) {
    // Dropping the connection rolls the transaction back and frees the lock.
    client.release(err as Error)
    throw err
  } finally {
    client.off('error', ignore)
  }
}
