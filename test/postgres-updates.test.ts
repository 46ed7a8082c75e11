import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import t, { type Test } from 'tap'
import { AUTH, postPlant, testApp } from './helpers/app.ts'
import { postgresRoutes } from './helpers/postgres-routes.ts'
import { pgClient } from './helpers/postgres.ts'
import { putPlant } from './helpers/update-suite.ts'

// PostgreSQL updates and deletes share group-commit transactions, as creates do, and stay compare-and-set across instances.

interface Fields { name: string, tag?: string }
type Change = Record<string, any>

async function metric (app: FastifyInstance, name: string): Promise<number> {
  const text = (await app.inject({ url: '/metrics', headers: AUTH })).body
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? 0)
}

/** Every event of the feed, from the start. */
async function feed (app: FastifyInstance): Promise<Change[]> {
  const seen: Change[] = []
  for (let after = 0; ;) {
    const page = (await app.inject({ url: `/plants/changes?limit=1000&after=${after}`, headers: AUTH })).json()
    seen.push(...page.changes)
    if (page.changes.length < 1000) return seen
    after = page.next
  }
}

/**
 * Replays the feed: each update's old is the plant as the events before it left it. A
 * deleted plant's earlier events have no data (erased): only its presence is replayed.
 */
function replay (t: Test, changes: Change[]): Map<number, Fields | null> {
  const plants = new Map<number, Fields | null>()
  for (const { type, id, data } of changes) {
    if (type === 'plant.created') {
      plants.set(id, data == null ? null : { name: data.name, ...(data.tag === undefined ? {} : { tag: data.tag }) })
    } else if (type === 'plant.deleted') {
      if (!plants.delete(id)) t.fail(`event ${id}: deleted while absent`)
    } else {
      if (!plants.has(id)) t.fail(`event ${id}: updated while absent`)
      if (data != null && JSON.stringify(data.old) !== JSON.stringify(plants.get(id))) t.fail(`event ${id}: old ${JSON.stringify(data.old)} is not ${JSON.stringify(plants.get(id))}`)
      plants.set(id, data == null ? null : data.new)
    }
  }
  return plants
}

async function remove (app: FastifyInstance, id: number): Promise<number> {
  return (await app.inject({ method: 'DELETE', url: `/plants/${id}`, headers: AUTH })).statusCode
}

/** The transactions that wrote the events of a type: an event commits with its change. */
async function transactions (client: pg.Client, type: string): Promise<number> {
  return (await client.query('SELECT count(DISTINCT xmin::text)::int AS n FROM webhook_events WHERE type = $1', [type])).rows[0].n
}

async function stored (app: FastifyInstance): Promise<Map<number, Fields>> {
  const plants = (await app.inject({ url: '/plants?limit=1000', headers: AUTH })).json() as Array<Fields & { id: number }>
  return new Map(plants.map(({ id, ...fields }) => [id, fields]))
}

const routes = postgresRoutes(t)

t.test('PostgreSQL updates', { skip: routes[0].skip }, async (t) => {
  const server = await routes[0].reach()

  t.test('concurrent updates and deletes share transactions; several of one plant in a batch apply in order', async (t) => {
    const url = await server.createDatabase('shared_commits')
    const app = await testApp(t, { DATABASE_URL: url, METRICS_CACHE_MS: '0' })
    const plants = Array.from({ length: 40 }, (_, i) => i + 1)
    for (const id of plants) await postPlant(app, { id, name: 'seed' })
    const [batches, written] = [await metric(app, 'plant_store_commit_batch_size_count'), await metric(app, 'plant_store_commit_batch_size_sum')]

    const answers = await Promise.all(plants.map(async (id) => await putPlant(app, id, { name: `new ${id}`, tag: 'moved' })))
    t.same(answers.map((res) => res.statusCode), plants.map(() => 200))

    const client = await pgClient(t, url)
    const { rows: [{ n }] } = await client.query('SELECT count(DISTINCT xmin::text)::int AS n FROM plants WHERE id BETWEEN 1 AND 40')
    t.ok(n <= plants.length / 4, `40 updates written by ${n} transactions`)
    t.equal(await transactions(client, 'plant.updated'), n, 'their events with them')
    const commits = await metric(app, 'plant_store_commit_batch_size_count') - batches
    t.ok(commits > 0 && commits <= plants.length / 4, `${commits} group commits`)
    t.ok(await metric(app, 'plant_store_commit_batch_size_sum') - written >= plants.length, 'every update went through them')

    await postPlant(app, { id: 100, name: 'hot' })
    const hot = await Promise.all(Array.from({ length: 10 }, async (_, i) => await putPlant(app, 100, { name: `editor ${i}` })))
    t.same(hot.map((res) => res.statusCode), hot.map(() => 200), 'every blind update of one plant is applied')
    const changes = await feed(app)
    const replayed = replay(t, changes)
    t.same(replayed, await stored(app), 'the feed replays to what is stored')
    t.equal(changes.filter((change) => change.type === 'plant.updated' && change.id === 100).length, 10, 'one event per update of the hot plant')

    const gone = await Promise.all([...plants.map(async (id) => await remove(app, id)), ...[1, 2, 3, 4, 5].map(async () => await remove(app, 100))])
    t.same(gone.slice(0, plants.length), plants.map(() => 204), 'every plant deleted')
    t.same(gone.slice(plants.length).sort(), [204, 404, 404, 404, 404], 'one plant deleted once by five at once')
    const deletes = await transactions(client, 'plant.deleted')
    t.ok(deletes <= plants.length / 4, `41 deletes written by ${deletes} transactions`)
    t.same(replay(t, await feed(app)), new Map(), 'the feed replays to no plant')
    t.same(await stored(app), new Map())
  })

  for (const route of routes) {
    t.test(`two apps on one database ${route.name}: concurrent If-Match updates of the same plants, one 200 per ETag, then racing deletes, one 204 each; the feed replays`, { skip: route.skip }, async (t) => {
      const url = await (await route.reach()).createDatabase('two_apps')
      const apps = [await testApp(t, { DATABASE_URL: url }), await testApp(t, { DATABASE_URL: url })]
      const plants = Array.from({ length: 8 }, (_, i) => 10 + i)
      for (const id of plants) await postPlant(apps[0], { id, name: 'start', tag: 'v0' })
      for (let round = 1; round <= 3; round++) {
        const etags = await Promise.all(plants.map(async (id) => (await apps[round % 2].inject({ url: `/plants/${id}`, headers: AUTH })).headers.etag as string))
        const answers = await Promise.all(plants.flatMap((id, p) => Array.from({ length: 6 }, async (_, i) =>
          [id, await putPlant(apps[i % 2], id, { name: `round ${round} editor ${i}`, tag: `v${round}` }, etags[p])] as const)))
        for (const id of plants) {
          const codes = answers.filter(([plant]) => plant === id).map(([, res]) => res.statusCode).sort()
          t.same(codes, [200, 412, 412, 412, 412, 412], `round ${round}, plant ${id}: one winner`)
          const winner = answers.find(([plant, res]) => plant === id && res.statusCode === 200)![1]
          t.equal((await apps[1].inject({ url: `/plants/${id}`, headers: AUTH })).body, winner.body, 'the winner is what is stored')
        }
      }
      const changes = await feed(apps[0])
      t.same(changes, await feed(apps[1]), 'both apps serve one feed')
      t.equal(changes.filter((change) => change.type === 'plant.updated').length, 3 * plants.length, 'one event per 200')
      t.same(replay(t, changes), await stored(apps[1]), 'the feed replays to what is stored')

      const deletes = await Promise.all(plants.flatMap((id) => [0, 1, 2, 3].map(async (i) => [id, await remove(apps[i % 2], id)] as const)))
      for (const id of plants) {
        t.same(deletes.filter(([plant]) => plant === id).map(([, code]) => code).sort(), [204, 404, 404, 404], `plant ${id} deleted once`)
      }
      t.same(replay(t, await feed(apps[1])), new Map(), 'one plant.deleted each: the feed replays to no plant')
    })
  }
})
