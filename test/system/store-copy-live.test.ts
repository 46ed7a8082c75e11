import Database from 'better-sqlite3'
import t from 'tap'
import { SqliteStore } from '../../src/store/sqlite/store.ts'
import type { StoredPlant } from '../../src/store/store.ts'
import { TOKEN } from '../helpers/app.ts'
import { createLoad } from '../helpers/create-load.ts'
import { postgresUnavailable, startPostgres } from '../helpers/postgres-cluster.ts'
import { startServer, type RunningServer } from '../helpers/server.ts'
import { checksums, exactJson, storeCommand } from '../helpers/store-command.ts'
import { plantsToCopy, STORE_CONTEXT } from '../helpers/store-content.ts'
import { retryUntil } from '../helpers/wait.ts'

// `npm run store -- copy` from a SQLite store while its service keeps creating: one
// snapshot goes over, holding every plant acknowledged before the copy began, and an
// instance on the PostgreSQL destination serves them exactly.

const ENV = { API_TOKENS: TOKEN, RATE_LIMIT_PER_TOKEN: '0' }

/** Every plant a running service serves, ascending by id, ids exact. */
async function served (server: RunningServer): Promise<StoredPlant[]> {
  const plants: StoredPlant[] = []
  for (;;) {
    const after = plants.length === 0 ? '' : `&after=${plants.at(-1)!.id}`
    const page = exactJson<StoredPlant[]>((await server.request('GET', `/plants?limit=1000${after}`)).body)
    if (page.length === 0) return plants
    plants.push(...page)
  }
}

t.test('a copy of a SQLite store its service keeps writing to holds every plant acknowledged before it began; PostgreSQL serves them exactly', { skip: postgresUnavailable() }, async (t) => {
  const dir = t.testdir()
  const path = `${dir}/plants.db`
  const postgres = await startPostgres(t)
  const destination = await postgres.createDatabase('moved')
  const store = new SqliteStore(path, STORE_CONTEXT)
  const prefilled = plantsToCopy(3000, 7)
  for (let i = 0; i < prefilled.length; i += 500) await Promise.all(prefilled.slice(i, i + 500).map(async (plant) => await store.create(plant)))
  await store.close()

  const source = await startServer(t, { ...ENV, DATABASE_URL: `sqlite:${path}` })
  const load = createLoad(source)
  await retryUntil(async () => load.acked.length, (n) => n >= 200, 30_000, 10)
  const ackedBefore = [...load.acked]
  const copy = await storeCommand(['copy', `sqlite:${path}`, destination])
  const ackedDuring = load.acked.length - ackedBefore.length
  await load.stop()
  t.equal(copy.code, 0, copy.stderr)
  t.equal(new Set(checksums(copy.stdout)).size, 1, 'the same checksum on both sides')
  t.ok(ackedDuring > 0, `the service went on acknowledging creates during the copy (${ackedDuring})`)
  source.child.kill('SIGTERM')
  await source.exited

  const moved = await startServer(t, { ...ENV, DATABASE_URL: destination })
  const plants = await served(moved)
  const byId = new Map(plants.map((plant) => [plant.id, plant]))
  t.same(prefilled.filter((plant) => byId.get(plant.id)?.name !== plant.name || byId.get(plant.id)?.tag !== plant.tag), [],
    `every one of the ${prefilled.length} plants of the file before the service started is served exactly`)
  t.same(ackedBefore.filter((id) => byId.get(BigInt(id))?.name !== `plant ${id}`), [], `so is each of the ${ackedBefore.length} acknowledged before the copy began`)
  const db = new Database(path, { readonly: true })
  db.defaultSafeIntegers(true)
  const get = db.prepare<[bigint], { name: string, tag: string | null }>('SELECT name, tag FROM plants WHERE id = ?')
  t.same(plants.filter(({ id, name, tag }) => get.get(id)?.name !== name || (get.get(id)?.tag ?? undefined) !== tag), [], 'and nothing but plants of the source')
  db.close()
})
