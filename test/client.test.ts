import t from 'tap'
import { createPlantStoreClient, nextLink, parseExact, PlantStoreError, stringifyExact } from '../client/src/index.ts'

/** A client whose fetch answers `answer` and keeps the requests it was given. */
function fake (answer: () => Response, options: { token?: string, headers?: Record<string, string> } = {}) {
  const requests: Request[] = []
  const client = createPlantStoreClient({
    baseUrl: 'http://plants.test/',
    ...options,
    fetch: async (request) => { requests.push(request); return answer() }
  })
  return { client, requests }
}

const json = (body: string, init: ResponseInit = {}) => () => new Response(body, { status: 200, headers: { 'content-type': 'application/json' }, ...init })

t.test('JSON both ways without loss: int64 properties exact, other numbers and string ids as they are', async (t) => {
  t.equal(stringifyExact({ id: -9223372036854775808n, name: 'a', n: 1.5 }), '{"id":-9223372036854775808,"name":"a","n":1.5}')
  t.same(parseExact('{"id":9223372036854775807,"plantId":-9223372036854775807,"error":404,"attempts":2}'),
    { id: 9223372036854775807n, plantId: -9223372036854775807n, error: 404, attempts: 2 })
  t.same(parseExact('[{"id":"a-webhook-id"},{"id":1}]'), [{ id: 'a-webhook-id' }, { id: 1n }])
  // The baseline the parser exists for.
  t.not(BigInt(JSON.parse('{"id":9223372036854775807}').id), 9223372036854775807n)
})

t.test('nextLink finds rel="next" among other links and relations, and nothing when there is none', async (t) => {
  t.equal(nextLink('</plants?limit=100&after=42>; rel="next"'), '/plants?limit=100&after=42')
  t.equal(nextLink('</a>; rel="prev", </b?x=1,2>; title="n"; rel="next last"'), '/b?x=1,2')
  t.equal(nextLink('</c>; REL=next'), '/c')
  t.equal(nextLink('</a>; rel="prev"'), undefined)
  t.equal(nextLink('</a>; rel="nextish"'), undefined)
  t.equal(nextLink('garbage'), undefined)
  t.equal(nextLink(null), undefined)
})

t.test('requests carry the token, the headers given, and bodies with exact ids', async (t) => {
  const { client, requests } = fake(json('{"name":"Rose"}'), { token: 'a-token', headers: { 'x-trace': '1' } })
  t.same(await client.createPlant({ id: 9223372036854775807n, name: 'Rose' }), { name: 'Rose' })
  const [request] = requests
  t.equal(request.url, 'http://plants.test/plants')
  t.equal(request.headers.get('authorization'), 'Bearer a-token')
  t.equal(request.headers.get('x-trace'), '1')
  t.equal(request.headers.get('content-type'), 'application/json')
  t.equal(await request.text(), '{"id":9223372036854775807,"name":"Rose"}')
  const anonymous = fake(json('[]'))
  for await (const plant of anonymous.client.plants({ tag: 'x' })) t.fail(`no plant expected, got ${plant.id}`)
  t.equal(anonymous.requests[0].url, 'http://plants.test/plants?tag=x')
  t.equal(anonymous.requests[0].headers.get('authorization'), null, 'no token, no Authorization')
})

t.test('the raw operations: a call that asks for another parseAs gets it, request() reads exactly, an empty body is no data', async (t) => {
  const { client } = fake(json('{"id":9007199254740993,"name":"Fern"}'))
  const text = await client.api.GET('/plants/{id}', { params: { path: { id: 1n } }, parseAs: 'text' })
  t.equal(text.data, '{"id":9007199254740993,"name":"Fern"}')
  const read = await client.api.request('get', '/plants/{id}', { params: { path: { id: 1n } } })
  t.same(read.data, { id: 9007199254740993n, name: 'Fern' })
  const empty = fake(() => new Response(new ReadableStream({ start (c) { c.close() } }), { status: 200 }))
  t.equal((await empty.client.api.GET('/plants/{id}', { params: { path: { id: 1n } } })).data, undefined)
  const deleted = fake(() => new Response(null, { status: 204 }))
  await deleted.client.deletePlant(1n)
  t.equal(deleted.requests[0].method, 'DELETE')
})

t.test('an answer without an Error body is a PlantStoreError all the same: no code, its status and its body', async (t) => {
  const { client } = fake(() => new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }))
  const err = await client.getPlant(1n).catch((err: unknown) => err)
  t.ok(err instanceof PlantStoreError)
  t.match(err, { status: 502, code: null, message: '502 Bad Gateway', body: '<html>bad gateway</html>', details: undefined })
  const bare = fake(() => new Response(null, { status: 400 }))
  t.match(await bare.client.getPlant(1n).catch((err: unknown) => err), { status: 400, code: null, message: '400', body: '' })
})

t.test('subscribe sends an Idempotency-Key, a new UUID or the one given, and tries again under it while told to wait', async (t) => {
  const created = '{"id":"wh_1","url":"https://x.test/","events":["plant.created"],"createdAt":"2026-12-06T00:00:00.000Z","status":"active","pendingDeliveries":0,"secret":"whsec_a"}'
  const answers = [
    () => new Response('{"error":409,"message":"running","code":"idempotency_key_in_use"}', { status: 409, headers: { 'content-type': 'application/json', 'retry-after': '0' } }),
    json(created, { status: 201 })
  ]
  const { client, requests } = fake(() => answers.shift()!())
  t.same(await client.subscribe({ url: 'https://x.test/' }), JSON.parse(created))
  const keys = requests.map((request) => request.headers.get('idempotency-key'))
  t.equal(keys.length, 2)
  t.match(keys[0], /^"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"$/, 'a quoted UUID')
  t.equal(keys[1], keys[0], 'the retry under the same key')

  const limit = fake(() => new Response('{"error":409,"message":"full","code":"subscription_limit"}', { status: 409, headers: { 'content-type': 'application/json' } }))
  t.match(await limit.client.subscribe({ url: 'https://x.test/' }, { idempotencyKey: 'say "hi" \\o/' }).catch((err: unknown) => err), { code: 'subscription_limit' })
  t.equal(limit.requests.length, 1, 'a refusal is not tried again')
  t.equal(limit.requests[0].headers.get('idempotency-key'), '"say \\"hi\\" \\\\o/"', 'the key given, as a Structured Field string')

  const down = fake(() => { throw new TypeError('fetch failed') })
  t.match(await down.client.subscribe({ url: 'https://x.test/' }, { attempts: 2 }).catch((err: unknown) => err), { message: 'fetch failed' })
  t.equal(down.requests.length, 2, 'no answer: tried again, `attempts` times in all')
})
