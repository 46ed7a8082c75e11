import { request } from 'node:http'
import Database from 'better-sqlite3'
import t from 'tap'
import { AUTH, assertError, postPlant, testApp } from './helpers/app.ts'
import { readEvents } from './helpers/sse.ts'

// The change feed's edges on a SQLite file: the horizon after a prune, and readers at close.
// Pages, waits, streams and bounds run on every engine in the store suite (helpers/changes-suite.ts).

t.test('a cursor before the events pruned is 410; the feed starts after them', async (t) => {
  const file = `${t.testdir()}/plants.db`
  const app = await testApp(t, { DATABASE_URL: `sqlite:${file}` })
  for (let id = 1; id <= 4; id++) await postPlant(app, { id, name: `p${id}` })
  const [first, , third] = (await app.inject({ url: '/plants/changes', headers: AUTH })).json().changes
  await app.close()
  // What the prune leaves (test/outbox-prune.test.ts proves it does): the first three gone, the horizon at the third.
  const db = new Database(file)
  db.prepare('DELETE FROM webhook_events WHERE seq <= ?').run(third.seq)
  db.prepare('UPDATE event_horizon SET pruned_through = ?').run(third.seq)
  db.close()

  const again = await testApp(t, { DATABASE_URL: `sqlite:${file}` })
  const expired = await again.inject({ url: `/plants/changes?after=${first.seq}`, headers: AUTH })
  assertError(t, expired, 410, 'cursor_expired')
  t.equal(expired.json().message,
    `the change feed no longer holds the events after cursor ${first.seq}: its events up to ${third.seq} were pruned; read the plants again, then follow the feed from its latest`)
  const stream = await again.inject({ url: `/plants/changes?after=${first.seq}`, headers: { ...AUTH, accept: 'text/event-stream' } })
  assertError(t, stream, 410, 'cursor_expired')
  t.same((await again.inject({ url: '/plants/changes', headers: AUTH })).json().changes.map((c: any) => c.id), [4], 'from the oldest kept')
  t.same((await again.inject({ url: `/plants/changes?after=${third.seq}`, headers: AUTH })).json().changes.map((c: any) => c.id), [4],
    'the horizon itself is a cursor that lost nothing')
  await postPlant(again, { id: 5, name: 'p5' })
  t.ok((await again.inject({ url: '/plants/changes', headers: AUTH })).json().changes[1].seq > third.seq + 1, 'a seq is never issued twice')
})

t.test('closing the app ends its streams and long polls at once', async (t) => {
  const app = await testApp(t, { DATABASE_URL: `sqlite:${t.testdir()}/plants.db`, SHUTDOWN_GRACE_MS: '20000' })
  await postPlant(app, { id: 1, name: 'p1' })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const url = `http://127.0.0.1:${(app.server.address() as any).port}/plants/changes`
  const stream = readEvents(url, AUTH)
  t.equal((await stream.take(1))[0].event, 'plant.created')
  const waiting = fetch(`${url}?after=1&wait=30`, { headers: AUTH })
  await new Promise((resolve) => setTimeout(resolve, 300))
  const started = Date.now()
  await app.close()
  t.ok(Date.now() - started < 5000, `closed in ${Date.now() - started} ms, not at the waits' end`)
  await t.rejects(stream.take(2), /the stream ended after 1 events/, 'the stream ended')
  const answered = await waiting
  t.equal(answered.status, 200, 'the long poll answered')
  t.same(((await answered.json()) as { changes: unknown[] }).changes, [], 'with an empty page')
})

t.test('a stream whose reader goes gives its slot back at once', async (t) => {
  const app = await testApp(t, { CHANGES_MAX_READERS_PER_TOKEN: '1' })
  await postPlant(app, { id: 1, name: 'p1' })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const url = `http://127.0.0.1:${(app.server.address() as any).port}/plants/changes`
  // Read the first event, then go, as a reader's process dies: its socket closes.
  await new Promise<void>((resolve) => {
    const reader = request(url, { headers: { ...AUTH, accept: 'text/event-stream' } }, (res) => {
      res.once('data', () => { reader.destroy(); resolve() })
    })
    reader.end()
  })
  await new Promise((resolve) => setTimeout(resolve, 200))
  const next = await app.inject({ url: '/plants/changes?after=1&wait=1', headers: AUTH })
  t.equal(next.statusCode, 200, 'the next wait of the token is taken, not 429')
})
