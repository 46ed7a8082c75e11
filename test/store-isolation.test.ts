import Database from 'better-sqlite3'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import type { Test } from 'tap'
import { AUTH, assertError, postPlant, testApp } from './helpers/app.ts'
import { postgresUnavailable, startPostgres } from './helpers/postgres-cluster.ts'
import { pgClient } from './helpers/postgres.ts'

const ORDINARY = 60

/** The value of one series in the app's /metrics (computed at each scrape: METRICS_CACHE_MS=0), 0 when absent. */
async function metric (app: FastifyInstance, series: string): Promise<number> {
  const text = (await app.inject({ url: '/metrics', headers: AUTH })).body
  const line = text.split('\n').find((line) => line.startsWith(series + ' '))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

/**
 * Sends `odd` in the middle of 60 ordinary creates, all at once, and checks that every
 * ordinary plant is answered 200 and stored. Returns the answer to `odd`.
 */
async function sendAmongOthers (t: Test, app: FastifyInstance, odd: { id: number, name: string, tag?: string }) {
  const ordinary = Array.from({ length: ORDINARY }, (_, i) => ({ id: 1000 + i, name: `plant ${i}`, tag: i % 2 === 0 ? 'even' : undefined }))
  const plants = [...ordinary.slice(0, ORDINARY / 2), odd, ...ordinary.slice(ORDINARY / 2)]
  const answers = await Promise.all(plants.map(async (plant) => await postPlant(app, plant)))
  const oddAnswer = answers.splice(ORDINARY / 2, 1)[0]
  t.same(answers.map((res) => res.statusCode), Array(ORDINARY).fill(200), 'every ordinary create answered 200')
  const stored = await Promise.all(ordinary.map(async (plant) => (await app.inject({ url: `/plants/${plant.id}`, headers: AUTH })).json()))
  t.same(stored, ordinary.map((plant) => JSON.parse(JSON.stringify(plant))), 'and stored')
  return oddAnswer
}

/** The plant the database refuses answers 400; the others of its batch were written as if it had not been there. */
async function checkPoisonIsolated (t: Test, app: FastifyInstance): Promise<void> {
  const series = {
    created: 'plant_store_operation_duration_seconds_count{operation="create",outcome="created"}',
    failed: 'plant_store_operation_duration_seconds_count{operation="create",outcome="error"}',
    written: 'plant_store_commit_batch_size_sum'
  }
  const counts = async () => Object.fromEntries(await Promise.all(Object.entries(series).map(async ([name, line]) => [name, await metric(app, line)])))
  const before = await counts()
  const poison = await sendAmongOthers(t, app, { id: 5, name: 'poison' })
  t.equal(assertError(t, poison, 400, 'the poison answers 400'), 'the plant store cannot keep this plant')
  assertError(t, await app.inject({ url: '/plants/5', headers: AUTH }), 404, 'the poison was not stored')

  const after = await counts()
  t.same({ created: after.created - before.created, failed: after.failed - before.failed }, { created: ORDINARY, failed: 1 },
    'nothing but the poison failed')
  // More rows written than sent: the poison shared a batch, which was split around it.
  const written = after.written - before.written
  t.ok(written > ORDINARY + 1, `the poison's batch was split (${written} rows written for ${ORDINARY + 1} creates)`)

  t.equal((await postPlant(app, { id: 5, name: 'not poison' })).statusCode, 200, 'its id is free')
}

t.test('SQLite: a plant the database refuses fails alone, not its batch', async (t) => {
  const path = `${t.testdir()}/plants.db`
  const app = await testApp(t, { DATABASE_URL: `sqlite:${path}`, METRICS_CACHE_MS: '0' })
  t.equal((await postPlant(app, { id: 1, name: 'first' })).statusCode, 200, 'migrated')
  const db = new Database(path)
  t.teardown(() => db.close())
  db.exec(`CREATE TRIGGER no_poison BEFORE INSERT ON plants WHEN NEW.name = 'poison'
           BEGIN SELECT RAISE(ABORT, 'no poison here'); END`)
  await checkPoisonIsolated(t, app)
})

t.test('PostgreSQL', { skip: postgresUnavailable() }, async (t) => {
  const server = await startPostgres(t)

  t.test('a plant the database refuses fails alone, not its batch', async (t) => {
    const url = await server.createDatabase('poison')
    const app = await testApp(t, { DATABASE_URL: url, METRICS_CACHE_MS: '0' })
    const client = await pgClient(t, url)
    await client.query("ALTER TABLE plants ADD CONSTRAINT no_poison CHECK (name <> convert_to('poison', 'UTF8'))")
    await checkPoisonIsolated(t, app)
  })

  t.test('a tag of 100 multi-byte code points is stored among others, and found by tag', async (t) => {
    const app = await testApp(t, { DATABASE_URL: await server.createDatabase('long_tag'), METRICS_CACHE_MS: '0' })
    // CJK ideographs (3 bytes in UTF-8) and emoji (4 bytes, 2 UTF-16 units each), at random.
    const tag = Array.from({ length: 100 }, () => String.fromCodePoint(Math.random() < 0.5
      ? 0x4E00 + Math.floor(Math.random() * 0x5000)
      : 0x1F300 + Math.floor(Math.random() * 0x300))).join('')
    t.equal([...tag].length, 100)
    const res = await sendAmongOthers(t, app, { id: 5, name: 'long tag', tag })
    t.equal(res.statusCode, 200, 'the long tag answers 200 too')
    const found = await app.inject({ url: `/plants?tag=${encodeURIComponent(tag)}`, headers: AUTH })
    t.same(found.json(), [{ id: 5, name: 'long tag', tag }], 'found by its tag')
  })
})
