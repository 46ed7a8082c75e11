import Database from 'better-sqlite3'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { AUTH, assertError, postPlant, testApp } from './app.ts'
import { erasureSuite } from './erasure-suite.ts'
import { eventsSuite } from './events-suite.ts'
import { readDatabase } from './read-database.ts'
import { startReceiver, type Receiver } from './receiver.ts'
import { replaySuite } from './replay-suite.ts'
import { retryUntil } from './wait.ts'

// The webhook outbox's bounds, through HTTP, on each store engine (issue #45, findings 4 and 8).

/** The bytes of every payload the store keeps, in whichever tables have a payload column. */
async function storedPayloadBytes (url: string): Promise<number> {
  return await readDatabase(url, {
    sqlite: (db) => {
      const tables = db.prepare<[], string>(`SELECT tables.name FROM sqlite_schema AS tables, pragma_table_info(tables.name) AS columns
        WHERE tables.type = 'table' AND columns.name = 'payload'`).pluck().all()
      return tables.reduce((sum, table) => sum + Number(db.prepare(`SELECT coalesce(sum(length(payload)), 0) FROM ${table}`).pluck().get()), 0)
    },
    postgres: async (client) => {
      const { rows } = await client.query<{ table_name: string }>(`SELECT table_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND column_name = 'payload'`)
      let sum = 0
      for (const { table_name: table } of rows) {
        sum += Number((await client.query(`SELECT coalesce(sum(octet_length(payload)), 0) AS bytes FROM ${table}`)).rows[0].bytes)
      }
      return sum
    }
  })
}

/** The SQLite file's size as its pages count it, the WAL's included. */
function sqliteBytes (url: string): number {
  const db = new Database(url.slice('sqlite:'.length), { readonly: true })
  try {
    return Number(db.pragma('page_count', { simple: true })) * Number(db.pragma('page_size', { simple: true }))
  } finally {
    db.close()
  }
}

async function subscribe (t: Test, app: FastifyInstance, url: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url } })
  t.equal(res.statusCode, 201, 'subscribed')
  return res.json().id
}

async function subscription (app: FastifyInstance, id: string): Promise<Record<string, any>> {
  return (await app.inject({ url: `/webhooks/${id}`, headers: AUTH })).json()
}

async function deliveries (app: FastifyInstance, id: string): Promise<Array<Record<string, any>>> {
  return (await app.inject({ url: `/webhooks/${id}/deliveries?limit=100`, headers: AUTH })).json()
}

/** The plant ids a receiver acknowledged (answered 2xx). */
function acknowledged (receiver: Receiver): Set<number> {
  return new Set(receiver.received.filter(({ status }) => status >= 200 && status < 300).map(({ body }) => JSON.parse(body).id))
}

export function outboxSuite (t: Test, databaseUrl: (t: Test) => Promise<string>): void {
  // Retries come quickly, so that a receiver that comes back is served within the test.
  const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '50' }

  t.test('a create stores its payload once, not once per subscription to a dead receiver', async (t) => {
    const url = await databaseUrl(t)
    const app = await testApp(t, { ...ENV, DATABASE_URL: url, WEBHOOK_RETRY_BASE_MS: '3600000' })
    const dead = await startReceiver(t, () => 503)
    const SUBSCRIPTIONS = 10
    const CREATES = 100
    for (let i = 0; i < SUBSCRIPTIONS; i++) await subscribe(t, app, dead.url)
    // 4 UTF-8 bytes a character: a payload of about 4 KB, far above a delivery row's own bytes.
    const name = (i: number): string => `${i}${'🌿'.repeat(990)}`
    const payload = Buffer.byteLength(JSON.stringify({ id: 100, name: name(100) }))
    await postPlant(app, { id: 1, name: name(1) })
    const bytesBefore = url.startsWith('sqlite:') ? sqliteBytes(url) : 0
    const payloadsBefore = await storedPayloadBytes(url)
    for (let i = 100; i < 100 + CREATES; i++) t.equal((await postPlant(app, { id: i, name: name(i) })).statusCode, 200, `create ${i}`)
    const payloads = await storedPayloadBytes(url) - payloadsBefore
    t.ok(payloads <= 1.1 * CREATES * payload, `${payloads} payload bytes stored for ${CREATES} creates of ${payload} bytes, ${SUBSCRIPTIONS} subscriptions`)
    if (url.startsWith('sqlite:')) {
      const perCreate = (sqliteBytes(url) - bytesBefore) / CREATES
      t.ok(perCreate < 0.6 * SUBSCRIPTIONS * payload, `the file grew ${perCreate} bytes a create, far less than a payload per subscription`)
    }
    t.equal((await deliveries(app, (await subscription(app, (await app.inject({ url: '/webhooks', headers: AUTH })).json()[0].id)).id)).length, 100,
      'each subscription still has a delivery of each create (the log pages at 100)')
  })

  t.test('past WEBHOOK_MAX_PENDING a subscription is disabled, creates go on, and enabling it replays what it missed', async (t) => {
    const app = await testApp(t, { ...ENV, DATABASE_URL: await databaseUrl(t), WEBHOOK_MAX_PENDING: '5' })
    const receiver = await startReceiver(t, () => 503)
    const id = await subscribe(t, app, receiver.url)
    for (let plant = 1; plant <= 12; plant++) t.equal((await postPlant(app, { id: plant, name: `p${plant}` })).statusCode, 200, `create ${plant} answered 200`)
    const disabled = await subscription(app, id)
    t.equal(disabled.status, 'disabled', 'the subscription is disabled')
    t.equal(disabled.pendingDeliveries, 5, 'its pending deliveries stopped at the bound')
    t.match(disabled.disabledAt, /^\d{4}-.*Z$/, 'when it was disabled')
    t.match(disabled.missedSince, /^\d{4}-.*Z$/, 'since when it misses plants')
    t.equal((await deliveries(app, id)).length, 5, 'the delivery log holds only the 5 below the bound')

    receiver.answer(() => 200)
    const enabled = await app.inject({ method: 'POST', url: `/webhooks/${id}/enable`, headers: AUTH })
    t.equal(enabled.statusCode, 202, 'enable is accepted')
    t.equal(enabled.body, '')
    t.equal((await subscription(app, id)).status, 'active')
    const all = Array.from({ length: 12 }, (_, i) => i + 1)
    const { value } = await retryUntil(async () => acknowledged(receiver), (ids) => all.every((plant) => ids.has(plant)), 15_000)
    t.same([...value].sort((a, b) => a - b), all, 'every plant reached the receiver, the missed ones replayed')
    const settled = await retryUntil(async () => await subscription(app, id), (s) => s.pendingDeliveries === 0 && s.missedSince === undefined, 5000)
    t.same({ ...settled.value, createdAt: undefined }, { id, url: receiver.url, events: ['plant.created'], status: 'active', pendingDeliveries: 0 },
      'active, nothing pending, nothing missed')
    t.equal((await postPlant(app, { id: 13, name: 'p13' })).statusCode, 200)
    await retryUntil(async () => acknowledged(receiver), (ids) => ids.has(13), 5000)
    t.ok(acknowledged(receiver).has(13), 'a new plant is announced again')
    assertError(t, await app.inject({ method: 'POST', url: '/webhooks/wh_00000000000000000000000000000000/enable', headers: AUTH }), 404, 'webhook_not_found')
  })

  t.test('a deleted plant is not sent again: its pending delivery fails, and a retry is refused', async (t) => {
    const app = await testApp(t, { ...ENV, DATABASE_URL: await databaseUrl(t) })
    const receiver = await startReceiver(t, () => 503)
    const id = await subscribe(t, app, receiver.url)
    t.equal((await postPlant(app, { id: 1, name: 'to forget' })).statusCode, 200)
    await receiver.waitFor(1)
    t.equal((await app.inject({ method: 'DELETE', url: '/plants/1', headers: AUTH })).statusCode, 204)
    // Never sent from the delete on; failed in the log once the cleanup has erased the plant's events.
    const [failed] = (await retryUntil(async () => await deliveries(app, id), ([delivery]) => delivery.status === 'failed', 5000, 20)).value
    t.equal(failed.status, 'failed', 'the pending delivery of the deleted plant failed')
    t.equal(failed.lastError, 'plant deleted')
    t.equal((await subscription(app, id)).pendingDeliveries, 0, 'it is no longer counted as pending')
    const sentBefore = receiver.received.length
    receiver.answer(() => 200)
    const retried = await app.inject({ method: 'POST', url: `/webhooks/${id}/deliveries/${String(failed.id)}/retry`, headers: AUTH })
    assertError(t, retried, 409, 'plant_deleted')

    // A delivered one, too, once its plant is deleted.
    t.equal((await postPlant(app, { id: 2, name: 'delivered' })).statusCode, 200)
    await retryUntil(async () => acknowledged(receiver), (ids) => ids.has(2), 10_000)
    t.equal((await app.inject({ method: 'DELETE', url: '/plants/2', headers: AUTH })).statusCode, 204)
    const delivered = (await deliveries(app, id)).find((d) => d.plantId === 2)!
    t.equal(delivered.status, 'delivered', 'what was delivered stays in the log as delivered')
    assertError(t, await app.inject({ method: 'POST', url: `/webhooks/${id}/deliveries/${String(delivered.id)}/retry`, headers: AUTH }), 409, 'plant_deleted')
    t.notOk(receiver.received.slice(sentBefore).some(({ body }) => body.includes('to forget')), 'the deleted plant was never sent after its delete')
  })

  eventsSuite(t, databaseUrl)
  replaySuite(t, databaseUrl)
  erasureSuite(t, databaseUrl)
}
