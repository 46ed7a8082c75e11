import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { AUTH, assertError, postPlant, testApp, TOKEN } from './app.ts'
import { startReceiver } from './receiver.ts'
import { readEvents } from './sse.ts'
import { putPlant } from './update-suite.ts'

// The change feed (issue #46), on each store engine: pages, long polls, streams, bounds.

async function feed (app: FastifyInstance, query = '') {
  return await app.inject({ url: `/plants/changes${query}`, headers: AUTH })
}

/** Every event after `after`, following each page's next. */
async function follow (app: FastifyInstance, limit: number, after?: number): Promise<Array<Record<string, any>>> {
  const seen = []
  for (let cursor = after; ;) {
    const res = await feed(app, `?limit=${limit}${cursor === undefined ? '' : `&after=${cursor}`}`)
    const page = res.json()
    seen.push(...page.changes)
    if (page.changes.length < limit) return seen
    cursor = page.next
  }
}

export function changesSuite (t: Test, databaseUrl: (t: Test) => Promise<string>): void {
  const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '50' }

  t.test('the feed holds each change once, in commit order, with its webhook body; a deleted plant\'s earlier data is erased', async (t) => {
    const app = await testApp(t, { DATABASE_URL: await databaseUrl(t) })
    t.same((await feed(app)).json(), { changes: [], next: 0, latest: 0 }, 'an empty feed')
    await postPlant(app, '{"id":9223372036854775807,"name":"Fern","tag":"shade"}')
    await putPlant(app, '9223372036854775807', { name: 'Boston fern' })
    await putPlant(app, '9223372036854775807', { name: 'Boston fern' }) // changes nothing: no event
    const before = await feed(app)
    t.equal(before.headers['content-type'], 'application/json; charset=utf-8')
    t.match(before.body, /"id":9223372036854775807,"data":\{"id":9223372036854775807,"name":"Fern","tag":"shade"\}/, 'ids exact, the data the webhook body')
    const [created, updated] = before.json().changes
    t.match(created, { seq: Number, type: 'plant.created', data: { name: 'Fern', tag: 'shade' } })
    t.match(updated, { seq: created.seq + 1, type: 'plant.updated', data: { type: 'plant.updated', old: { name: 'Fern', tag: 'shade' }, new: { name: 'Boston fern' } } })
    t.ok(Date.parse(created.at) <= Date.parse(updated.at) && Date.parse(updated.at) <= Date.now(), 'at: when each committed')
    t.equal(before.json().next, updated.seq)
    t.equal(before.json().latest, updated.seq)

    t.equal((await app.inject({ method: 'DELETE', url: '/plants/9223372036854775807', headers: AUTH })).statusCode, 204)
    const after = (await feed(app)).json().changes
    t.same(after.map((c: any) => [c.type, c.erased, c.data?.name]), [
      ['plant.created', true, undefined], ['plant.updated', true, undefined], ['plant.deleted', undefined, 'Boston fern']
    ], 'the delete erased the earlier data; its own event says what was deleted')
  })

  t.test('paging from any cursor visits every event exactly once; a cursor the feed does not cover is 410', async (t) => {
    const app = await testApp(t, { DATABASE_URL: await databaseUrl(t) })
    for (let id = 1; id <= 23; id++) await postPlant(app, { id, name: `p${id}` })
    const all = await follow(app, 5)
    t.same(all.map((c) => c.id), Array.from({ length: 23 }, (_, i) => i + 1), 'each once, in order')
    t.same((await follow(app, 7, all[9].seq)).map((c) => c.id), all.slice(10).map((c) => c.id), 'resumed after the tenth')
    const latest = all[22].seq
    t.same((await feed(app, `?after=${latest}`)).json(), { changes: [], next: latest, latest }, 'caught up: next stays')
    const ahead = await feed(app, `?after=${latest + 1}`)
    assertError(t, ahead, 410, 'cursor_expired')
    t.match(ahead.json().message, `no event of this store reached it (the latest is ${latest})`)
    for (const query of ['?after=-1', '?limit=0', '?limit=1001', '?wait=31', '?after=1.5']) assertError(t, await feed(app, query), 400, 'invalid_parameter')
    assertError(t, await feed(app, '?cursor=1'), 400, 'unknown_parameter')
  })

  t.test('a long poll answers when a change commits, or empty when its wait is up', async (t) => {
    const app = await testApp(t, { DATABASE_URL: await databaseUrl(t) })
    await postPlant(app, { id: 1, name: 'a' })
    const { latest } = (await feed(app)).json()
    const started = Date.now()
    const polled = feed(app, `?after=${latest}&wait=20`)
    setTimeout(() => { postPlant(app, { id: 2, name: 'b' }).catch(t.threw) }, 200)
    const page = (await polled).json()
    t.same(page.changes.map((c: any) => c.id), [2], 'the new event')
    t.ok(Date.now() - started < 10_000, 'long before the wait was up')
    const quiet = Date.now()
    t.same((await feed(app, `?after=${page.next}&wait=1`)).json().changes, [], 'nothing new: empty')
    t.ok(Date.now() - quiet >= 900, 'after the wait')
  })

  t.test('waiting and streaming readers are bounded per token and in all', async (t) => {
    const other = `${TOKEN}-other`
    const app = await testApp(t, { DATABASE_URL: await databaseUrl(t), API_TOKENS: `${TOKEN},${other}`, CHANGES_MAX_READERS_PER_TOKEN: '2', CHANGES_MAX_READERS: '3' })
    const byOther = { authorization: `Bearer ${other}` }
    const waits = [feed(app, '?wait=2'), feed(app, '?wait=2'), app.inject({ url: '/plants/changes?wait=2', headers: byOther })]
    await new Promise((resolve) => setTimeout(resolve, 200))
    const third = await feed(app, '?wait=2')
    assertError(t, third, 429, 'too_many_readers')
    t.equal(third.headers['retry-after'], '1')
    const beyond = await app.inject({ url: '/plants/changes?wait=2', headers: byOther })
    assertError(t, beyond, 503, 'overloaded')
    t.equal(beyond.headers['retry-after'], '1')
    t.equal((await feed(app)).statusCode, 200, 'a read that does not wait is not counted')
    for (const res of await Promise.all(waits)) t.equal(res.statusCode, 200, 'the waits answered once their time was up')
    t.equal((await feed(app, '?wait=1')).statusCode, 200, 'their slots were given back')
  })

  t.test('a stream sends each event as it commits, and resumes after Last-Event-ID without a gap', async (t) => {
    const app = await testApp(t, { ...ENV, DATABASE_URL: await databaseUrl(t) })
    const receiver = await startReceiver(t)
    const sub = await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: receiver.url, events: ['plant.created', 'plant.updated', 'plant.deleted'] } })
    t.equal(sub.statusCode, 201)
    await app.listen({ host: '127.0.0.1', port: 0 })
    const base = `http://127.0.0.1:${(app.server.address() as any).port}`
    const first = readEvents(`${base}/plants/changes`, AUTH)
    // Each delivered before the next change: a delete fails its plant's deliveries still pending.
    await postPlant(app, '{"id":-9223372036854775808,"name":"Ivy"}')
    await receiver.waitFor(1)
    t.equal((await putPlant(app, '-9223372036854775808', { name: 'English ivy', tag: 'climber' })).statusCode, 200)
    await receiver.waitFor(2)
    t.equal((await app.inject({ method: 'DELETE', url: '/plants/-9223372036854775808', headers: AUTH })).statusCode, 204)
    const streamed = await first.take(3)
    first.close()
    t.equal(first.contentType, 'text/event-stream')
    t.same(streamed.map((e) => e.event), ['plant.created', 'plant.updated', 'plant.deleted'])
    t.same(streamed.map((e) => e.id), streamed.map((e) => String(JSON.parse(e.data).seq)), 'each id its seq')
    await receiver.waitFor(3)
    t.same(streamed.map((e) => /"data":(.*)\}$/.exec(e.data)![1]), receiver.received.map((r) => r.body),
      'the webhook subscriber and the stream saw the same events, in the same order, the same bodies')

    await postPlant(app, { id: 5, name: 'Moss' })
    const resumed = readEvents(`${base}/plants/changes`, { ...AUTH, 'last-event-id': streamed[1].id! })
    t.same((await resumed.take(2)).map((e) => e.event), ['plant.deleted', 'plant.created'], 'after the second: the third, then what came while away')
    resumed.close()
    const late = await app.inject({ url: '/plants/changes', headers: { ...AUTH, accept: 'text/event-stream', 'last-event-id': 'x' } })
    assertError(t, late, 400, 'invalid_parameter')
  })
}
