import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { AUTH, postPlant, testApp } from './helpers/app.ts'
import { postgresUnavailable, startPostgres } from './helpers/postgres-cluster.ts'
import { pgClient } from './helpers/postgres.ts'
import { putPlant } from './helpers/update-suite.ts'

// PostgreSQL updates share group-commit transactions, as creates do, and stay compare-and-set across instances.

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

/** Replays the feed's creates and updates: each update's old is the plant as the events before it left it. */
function replay (t: Test, changes: Change[]): Map<number, Fields> {
  const plants = new Map<number, Fields>()
  for (const { type, id, data } of changes) {
    if (type === 'plant.created') {
      plants.set(id, { name: data.name, ...(data.tag === undefined ? {} : { tag: data.tag }) })
    } else {
      if (type !== 'plant.updated') t.fail(`unexpected ${type}`)
      if (JSON.stringify(data.old) !== JSON.stringify(plants.get(id))) t.fail(`event ${id}: old ${JSON.stringify(data.old)} is not ${JSON.stringify(plants.get(id))}`)
      plants.set(id, data.new)
    }
  }
  return plants
}

async function stored (app: FastifyInstance): Promise<Map<number, Fields>> {
  const plants = (await app.inject({ url: '/plants?limit=1000', headers: AUTH })).json() as Array<Fields & { id: number }>
  return new Map(plants.map(({ id, ...fields }) => [id, fields]))
}

t.test('PostgreSQL updates', { skip: postgresUnavailable() }, async (t) => {
  const server = await startPostgres(t)

  t.test('concurrent updates share transactions; several of one plant in a batch apply in order', async (t) => {
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
  })

  t.test('two apps on one database: concurrent If-Match updates of the same plants, one 200 per ETag, the feed replays to the plants', async (t) => {
    const url = await server.createDatabase('two_apps')
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
  })
})
