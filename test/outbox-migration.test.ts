import { randomBytes } from 'node:crypto'
import Database from 'better-sqlite3'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { AUTH, testApp } from './helpers/app.ts'
import { postgresUnavailable, startPostgres } from './helpers/postgres-cluster.ts'
import { pgClient } from './helpers/postgres.ts'
import { startReceiver, type Receiver } from './helpers/receiver.ts'
import { retryUntil } from './helpers/wait.ts'

// A store made before the outbox kept each payload once (its deliveries each holding a
// copy) is migrated with its data: what was pending goes out, what failed can be retried.

const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true' }
const secret = (): string => `whsec_${randomBytes(32).toString('base64')}`
const WH1 = `wh_${'1'.repeat(32)}`
const WH2 = `wh_${'2'.repeat(32)}`
const PENDING = `msg_${'a'.repeat(32)}`
const PENDING_TOO = `msg_${'b'.repeat(32)}`
const FAILED = `msg_${'c'.repeat(32)}`

/** Rows as the old schema held them: two subscriptions, plant 1 pending to both, plant 2 failed to the first. */
function oldRows (url: string): Array<{ table: string, row: Record<string, unknown> }> {
  const now = Date.now()
  return [
    { table: 'webhooks', row: { id: WH1, url, secret: secret(), created_at: now } },
    { table: 'webhooks', row: { id: WH2, url, secret: secret(), created_at: now } },
    { table: 'webhook_deliveries', row: { id: PENDING, webhook_id: WH1, plant_id: 1, payload: '{"id":1,"name":"Fern"}', status: 'pending', next_attempt_at: now, created_at: now } },
    { table: 'webhook_deliveries', row: { id: PENDING_TOO, webhook_id: WH2, plant_id: 1, payload: '{"id":1,"name":"Fern"}', status: 'pending', next_attempt_at: now, created_at: now } },
    { table: 'webhook_deliveries', row: { id: FAILED, webhook_id: WH1, plant_id: 2, payload: '{"id":2,"name":"Moss"}', status: 'failed', attempts: 57, created_at: now, settled_at: now } }
  ]
}

async function migratedServes (t: Test, app: FastifyInstance, receiver: Receiver, events: () => Promise<number>): Promise<void> {
  await app.ready()
  const { value } = await retryUntil(async () => receiver.received.map((r) => `${String(r.headers['webhook-id'])} ${r.body}`),
    (got) => got.length >= 2, 10_000)
  t.same(value.sort(), [`${PENDING} {"id":1,"name":"Fern"}`, `${PENDING_TOO} {"id":1,"name":"Fern"}`], 'the pending deliveries went out, same ids, same payloads')
  t.equal(await events(), 2, 'one event per payload, not one per delivery')
  const retried = await app.inject({ method: 'POST', url: `/webhooks/${WH1}/deliveries/${FAILED}/retry`, headers: AUTH })
  t.equal(retried.statusCode, 202, 'the failed one can be retried')
  await receiver.waitFor(3)
  t.equal(receiver.received[2].body, '{"id":2,"name":"Moss"}', 'with its payload')
  const { value: shown } = await retryUntil(async () => (await app.inject({ url: `/webhooks/${WH1}`, headers: AUTH })).json(),
    (s) => s.pendingDeliveries === 0, 5000)
  t.equal(shown.status, 'active')
  t.equal(shown.pendingDeliveries, 0, 'the pending counter started from the pending deliveries, and came back to 0')
}

t.test('SQLite: a version 3 file keeps its deliveries through the migration', async (t) => {
  const file = `${t.testdir()}/v3.db`
  await (await testApp(t, { DATABASE_URL: `sqlite:${file}` })).close()
  const old = new Database(file)
  old.exec(`DROP TABLE plant_erasures; DROP INDEX webhook_deliveries_plant; ALTER TABLE webhooks DROP COLUMN events;
    DROP INDEX webhook_deliveries_event; ALTER TABLE webhook_deliveries DROP COLUMN event_seq; DROP TABLE webhook_events; DROP TABLE event_horizon; DROP TABLE idempotency_keys;
    ALTER TABLE webhooks DROP COLUMN pending; ALTER TABLE webhooks DROP COLUMN disabled_at; ALTER TABLE webhooks DROP COLUMN missed_since;
    ALTER TABLE webhooks DROP COLUMN missed_from; ALTER TABLE webhooks DROP COLUMN replay_from; ALTER TABLE webhooks DROP COLUMN replay_to;
    PRAGMA user_version = 3`)
  const receiver = await startReceiver(t)
  for (const { table, row } of oldRows(receiver.url)) {
    const values = Object.values(row).map((value) => typeof value === 'string' && value.startsWith('{') ? Buffer.from(value) : value)
    old.prepare(`INSERT INTO ${table} (${Object.keys(row).join(', ')}) VALUES (${values.map(() => '?').join(', ')})`).run(...values)
  }
  old.close()
  const app = await testApp(t, { ...ENV, DATABASE_URL: `sqlite:${file}` })
  await migratedServes(t, app, receiver, async () => {
    const db = new Database(file, { readonly: true })
    try {
      return Number(db.prepare('SELECT count(*) FROM webhook_events').pluck().get())
    } finally {
      db.close()
    }
  })
})

t.test('PostgreSQL: a version 4 database keeps its deliveries through the migration', { skip: postgresUnavailable() }, async (t) => {
  const server = await startPostgres(t)
  const url = await server.createDatabase('outbox_v4')
  await (await testApp(t, { DATABASE_URL: url })).close()
  const client = await pgClient(t, url)
  await client.query(`DROP TABLE plant_erasures; DROP INDEX webhook_deliveries_plant; ALTER TABLE webhooks DROP COLUMN events;
    DROP TABLE webhook_events, event_horizon, idempotency_keys; ALTER TABLE webhook_deliveries DROP COLUMN event_seq, ADD COLUMN payload bytea NOT NULL;
    ALTER TABLE webhooks DROP COLUMN pending, DROP COLUMN disabled_at, DROP COLUMN missed_since, DROP COLUMN missed_from,
      DROP COLUMN replay_from, DROP COLUMN replay_to;
    DELETE FROM plant_store_migrations WHERE version >= 5`)
  const receiver = await startReceiver(t)
  for (const { table, row } of oldRows(receiver.url)) {
    const values = Object.values(row).map((value) => typeof value === 'number' && value > 1e12 ? new Date(value) : typeof value === 'string' && value.startsWith('{') ? Buffer.from(value) : value)
    await client.query(`INSERT INTO ${table} (${Object.keys(row).join(', ')}) VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')})`, values)
  }
  const app = await testApp(t, { ...ENV, DATABASE_URL: url })
  await migratedServes(t, app, receiver, async () => Number((await client.query('SELECT count(*) AS n FROM webhook_events')).rows[0].n))
})
