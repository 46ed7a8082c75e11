import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { AUTH, healthBehindBurst, postPlant, testApp } from './helpers/app.ts'

// The change feed's pages under abuse (issue #54, findings 2 and 5): counted in bytes, and
// taking turns of the event loop with every other page.

const MiB = 1024 * 1024

async function createMany (t: Test, app: FastifyInstance, count: number, name: (i: number) => string): Promise<void> {
  for (let i = 0; i < count; i += 100) {
    const created = await Promise.all(Array.from({ length: Math.min(100, count - i) }, async (_, j) => (await postPlant(app, { id: i + j, name: name(i + j) })).statusCode))
    if (created.some((status) => status !== 200)) t.fail(`creates answered ${created.join()}`)
  }
}

t.test('a feed page stops at its byte budget whatever the characters, and next goes on', async (t) => {
  const app = await testApp(t)
  // 1000 code points of 3 bytes each, and of 6 bytes each as JSON writes them (\u0001).
  const names = [(i: number) => `${i}`.padStart(4, '0') + '漢'.repeat(996), (i: number) => `${i}`.padStart(4, '0') + '\u0001'.repeat(996)]
  await createMany(t, app, 1000, (i) => names[i % 2](i))
  const first = await app.inject({ url: '/plants/changes?limit=1000', headers: AUTH })
  t.equal(first.statusCode, 200)
  const page = first.json()
  t.ok(page.changes.length > 100 && page.changes.length < 1000, `${page.changes.length} events on the first page`)
  t.ok(first.rawPayload.length <= 2 * MiB, `${first.rawPayload.length} bytes`)
  t.equal(page.next, page.changes[page.changes.length - 1].seq)
  const seen: number[] = []
  for (let cursor = 0; ;) {
    const res = await app.inject({ url: `/plants/changes?limit=1000&after=${cursor}`, headers: AUTH })
    t.ok(res.rawPayload.length <= 2 * MiB, `a page of ${res.rawPayload.length} bytes`)
    const { changes, next } = res.json()
    seen.push(...changes.map((change: { id: number }) => change.id))
    if (changes.length === 0) break
    cursor = next
  }
  t.same(seen, Array.from({ length: 1000 }, (_, i) => i), 'every event once, in order, over the pages')
})

t.test('a burst of the largest feed pages shares the event loop: another client\'s request waits for about one page, not for all of them', async (t) => {
  const app = await testApp(t)
  await createMany(t, app, 1000, () => '€'.repeat(1000)) // 3000 bytes: a page of 1000 stops at about 700 events, 2 MiB
  t.equal((await app.inject({ url: '/plants/changes?limit=1000', headers: AUTH })).statusCode, 200)
  const { waited, all } = await healthBehindBurst(t, app, '/plants/changes?limit=1000')
  t.ok(waited < all / 4, `the health check waited ${waited.toFixed(0)} ms, the 20 pages ${all.toFixed(0)} ms`)
})
