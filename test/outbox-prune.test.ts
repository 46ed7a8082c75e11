import Database from 'better-sqlite3'
import { pino } from 'pino'
import t, { type Test } from 'tap'
import { PostgresStore } from '../src/store/postgres/store.ts'
import { SqliteStore } from '../src/store/sqlite/store.ts'
import type { PlantStore } from '../src/store/store.ts'
import { CHUNK_ROWS } from '../src/store/webhooks.ts'
import { postgresUnavailable, startPostgres } from './helpers/postgres-cluster.ts'
import { pgClient } from './helpers/postgres.ts'

// Events are pruned a bounded chunk at a time, and only once no delivery refers to them.

const CONTEXT = { log: pino({ level: 'silent' }), maxBatch: 512, maxQueueBytes: 1 << 24, onBatch: () => {} }
const subscription = (id: string) => ({ id, url: 'https://example.com/hook', secret: `whsec_${Buffer.alloc(32).toString('base64')}`, createdAt: new Date() })

async function prunes (t: Test, store: PlantStore, events: () => Promise<number>): Promise<void> {
  const first = `wh_${'1'.repeat(32)}`
  t.equal(await store.webhooks.subscribe(subscription(first), 20), 'subscribed')
  const create = async (from: number, to: number) => await Promise.all(Array.from({ length: to - from + 1 }, async (_, i) =>
    await store.create({ id: BigInt(from + i), name: `p${from + i}` })))
  await create(1, 2400)
  t.equal(await store.webhooks.subscribe(subscription(`wh_${'2'.repeat(32)}`), 20), 'subscribed')
  await create(2401, 2500)
  t.ok(await store.webhooks.unsubscribe(first), 'the first subscription goes')
  while (await store.webhooks.sweep(1000) > 0); // and its deliveries, as the cleanup deletes them
  t.equal(await events(), 2500)

  t.equal(await store.webhooks.pruneEvents(new Date(Date.now() - 3_600_000), 0, CHUNK_ROWS), undefined, 'none is old enough: done at once')
  t.equal(await events(), 2500, 'nothing pruned')

  let calls = 0
  for (let after: number | undefined = 0; after !== undefined; calls++) after = await store.webhooks.pruneEvents(new Date(Date.now() + 60_000), after, CHUNK_ROWS)
  t.ok(calls >= Math.ceil(2500 / CHUNK_ROWS), `${calls} chunks of at most ${CHUNK_ROWS} events`)
  t.equal(await events(), 100, 'the events a delivery refers to are kept; the others are gone')
  const feed = await store.changes.read({ limit: 10, bytes: 1 << 20 })
  t.equal(feed.horizon, 2400, 'the change feed\'s horizon: the last seq pruned')
  t.same(feed.changes.map((change) => change.seq), Array.from({ length: 10 }, (_, i) => 2401 + i), 'the feed starts after it')
  t.equal(feed.latest, 2500)
}

t.test('SQLite', async (t) => {
  const file = `${t.testdir()}/plants.db`
  const store = new SqliteStore(file, CONTEXT)
  t.teardown(async () => await store.close())
  await prunes(t, store, async () => {
    const db = new Database(file, { readonly: true })
    try {
      return Number(db.prepare('SELECT count(*) FROM webhook_events').pluck().get())
    } finally {
      db.close()
    }
  })
})

t.test('PostgreSQL', { skip: postgresUnavailable() }, async (t) => {
  const server = await startPostgres(t)
  const url = await server.createDatabase('prune')
  const store = await PostgresStore.open(url, 5, CONTEXT)
  t.teardown(async () => await store.close())
  const client = await pgClient(t, url)
  await prunes(t, store, async () => Number((await client.query('SELECT count(*) AS n FROM webhook_events')).rows[0].n))
})
