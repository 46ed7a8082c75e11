import pino from 'pino'
import type { Test } from 'tap'
import { database } from '../../src/config/values.ts'
import { openStore } from '../../src/store/open.ts'
import { CLEANUP_CHUNK } from '../../src/webhooks/outbox-cleanup.ts'
import { AUTH, postPlant, testApp } from './app.ts'
import { readDatabase } from './read-database.ts'
import { retryUntil } from './wait.ts'

// A plant's deletion costs the same whatever its history (issue #54, finding 6): its
// transaction writes the deletion; its earlier events read as erased from then on, and the
// cleanup erases their data a chunk per statement.

const HISTORY = 2 * CLEANUP_CHUNK + 200

/** How many of the plant's events still hold their data in the database, as it keeps them. */
async function payloadsKept (url: string, plant: bigint): Promise<number> {
  const sql = 'SELECT count(*) AS n FROM webhook_events WHERE plant_id = $1 AND payload IS NOT NULL'
  return await readDatabase(url, {
    sqlite: (db) => Number(db.prepare(sql.replace('$1', '?')).pluck().get(plant)),
    postgres: async (client) => Number((await client.query<{ n: string }>(sql, [String(plant)])).rows[0].n)
  })
}

export function erasureSuite (t: Test, databaseUrl: (t: Test) => Promise<string>): void {
  t.test('a delete writes its deletion, not the erasure of its plant\'s history, which reads as erased at once and is erased a chunk per statement', async (t) => {
    const url = await databaseUrl(t)
    // The store alone: no cleanup runs but the one this test calls.
    const store = await openStore(database(url, 4), { log: pino({ level: 'silent' }), maxBatch: 512, maxQueueBytes: 1 << 24, onBatch: () => {} })
    t.teardown(async () => await store.close())
    t.equal((await store.create({ id: 7n, name: 'v0' })).outcome, 'created')
    for (let i = 1; i <= HISTORY; i += 100) {
      // One plant's updates in batches: each changes it, so each is an event.
      for (const outcome of await Promise.all(Array.from({ length: 100 }, async (_, j) => (await store.update(7n, { name: `v${i + j}` })).outcome))) {
        if (outcome !== 'updated') t.fail(`an update: ${outcome}`)
      }
    }
    t.equal(await payloadsKept(url, 7n), HISTORY + 1, 'the plant\'s history')
    t.equal(await store.delete(7n), 'deleted')
    t.equal(await payloadsKept(url, 7n), HISTORY + 2, 'the delete\'s transaction wrote its deletion and left the history to the cleanup')
    const { changes } = await store.changes.read({ limit: 1000, bytes: 1 << 30 })
    t.ok(changes.every((change) => change.type === 'plant.deleted' || change.payload === null), 'the history reads as erased at once')
    const [deletion] = (await store.changes.read({ after: await store.changes.latest() - 1, limit: 1, bytes: 1 << 20 })).changes
    t.equal(deletion.type, 'plant.deleted')
    t.match(deletion.payload?.toString(), /^\{"type":"plant.deleted","id":7,"name":"v\d+"\}$/, 'the deletion keeps the name it had')
    for (let kept = HISTORY + 2, more = true; more;) {
      more = await store.webhooks.erase(CLEANUP_CHUNK)
      const left = await payloadsKept(url, 7n)
      if (kept - left > CLEANUP_CHUNK) t.fail(`one statement erased ${kept - left} events`)
      kept = left
    }
    t.equal(await payloadsKept(url, 7n), 1, 'only the deletion keeps its data once the cleanup is done')
  })

  t.test('a plant deleted and created again keeps the events after its deletion', async (t) => {
    const url = await databaseUrl(t)
    const app = await testApp(t, { DATABASE_URL: url })
    await postPlant(app, { id: 1, name: 'Fern' })
    await app.inject({ method: 'PUT', url: '/plants/1', headers: AUTH, payload: { name: 'Boston fern' } })
    t.equal((await app.inject({ method: 'DELETE', url: '/plants/1', headers: AUTH })).statusCode, 204)
    await postPlant(app, { id: 1, name: 'Ivy' })
    await app.inject({ method: 'PUT', url: '/plants/1', headers: AUTH, payload: { name: 'English ivy' } })
    const feed = async (): Promise<string[]> => (await app.inject({ url: '/plants/changes', headers: AUTH })).json().changes
      .map((change: { type: string, data?: { name?: string, new?: { name: string } } }) => `${change.type} ${change.data?.new?.name ?? change.data?.name ?? 'erased'}`)
    const expected = ['plant.created erased', 'plant.updated erased', 'plant.deleted Boston fern', 'plant.created Ivy', 'plant.updated English ivy']
    t.same(await feed(), expected, 'as soon as the delete answered')
    const { value: kept } = await retryUntil(async () => await payloadsKept(url, 1n), (n) => n === 3, 5000, 20)
    t.equal(kept, 3, 'the cleanup erased the data of the events before the deletion, and only those')
    t.same(await feed(), expected, 'the feed reads the same once they are erased')
  })
}
