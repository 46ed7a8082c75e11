import t from 'tap'
import { createPlantStoreClient, PlantStoreError, type PlantStoreClient } from '../../client/src/index.ts'
import { TOKEN } from '../helpers/app.ts'
import { startServer } from '../helpers/server.ts'

const MAX = 9223372036854775807n
const MIN = -9223372036854775808n

// One service for the whole file: each test keeps to its own ids and tags.
const server = await startServer(t, { API_TOKENS: TOKEN, WEBHOOK_ALLOW_PRIVATE: 'true' })

/** A client of the service, and the requests it has made. */
function setup (): { client: PlantStoreClient, requests: string[] } {
  const requests: string[] = []
  const fetch = async (request: Request): Promise<Response> => {
    requests.push(`${request.method} ${request.url.slice(server.url.length)}`)
    return await globalThis.fetch(request)
  }
  return { client: createPlantStoreClient({ baseUrl: server.url, token: TOKEN, fetch }), requests }
}

t.test('the client round-trips the int64 extremes exactly: create, read, list, delete by the id read', async (t) => {
  const { client } = setup()
  // -2^63 + 1 is read by JSON.parse as -2^63: a client that rounds deletes the wrong plant.
  const ids = [MAX, MIN, MIN + 1n]
  t.equal(BigInt(JSON.parse(`${MIN + 1n}`)), MIN, 'the baseline: JSON.parse rounds -2^63 + 1 to -2^63')
  for (const id of ids) t.same(await client.createPlant({ id, name: `plant ${id}`, tag: 'edge' }), { name: `plant ${id}`, tag: 'edge' })
  const listed = []
  for await (const plant of client.plants({ tag: 'edge' })) listed.push(plant.id)
  t.same(listed, [MIN, MIN + 1n, MAX], 'listed exactly, in order')
  for (const id of [MAX, MIN + 1n]) {
    const read = await client.getPlant(id)
    t.equal(read.id, id, `${id} read exactly`)
    t.equal(typeof read.id, 'bigint')
    await client.deletePlant(read.id)
  }
  t.same((await client.getPlant(MIN)).id, MIN, '-2^63 is still there: the delete took the id it read')
  const left = []
  for await (const plant of client.plants({ tag: 'edge' })) left.push(plant.id)
  t.same(left, [MIN])
})

t.test('the iterator pages through 1,000 plants by following each Link rel="next"', async (t) => {
  const { client, requests } = setup()
  // Ids past 2^53, one apart: any rounding would merge or reorder them.
  const base = 2n ** 62n
  const ids = Array.from({ length: 1000 }, (_, i) => base + BigInt(i))
  // Created without the client, the quicker way: what is tested here is the reading.
  const statuses = new Set<number>()
  for (let i = 0; i < ids.length; i += 50) {
    await Promise.all(ids.slice(i, i + 50).map(async (id) =>
      statuses.add((await server.request('POST', '/plants', { body: `{"id":${id},"name":"fern ${id}","tag":"fern"}` })).statusCode)))
  }
  t.same([...statuses], [200])
  requests.length = 0
  const seen: bigint[] = []
  const names: string[] = []
  for await (const plant of client.plants({ tag: 'fern', limit: 100 })) {
    seen.push(plant.id)
    names.push(plant.name)
  }
  t.same(seen, ids, 'every plant once, in ascending id order')
  t.same(names, ids.map((id) => `fern ${id}`))
  t.ok(requests.length >= 10 && requests.length <= 11, `ten pages of 100 (and an empty eleventh at most): ${requests.length}`)
  t.equal(requests[0], 'GET /plants?tag=fern&limit=100')
  t.match(requests[1], new RegExp(`after=${ids[99]}`), 'the next page starts after the last id, exactly')
  // Leaving the loop early stops the requests.
  requests.length = 0
  for await (const plant of client.plants({ tag: 'fern', limit: 10 })) if (plant.id === ids[0]) break
  t.equal(requests.length, 1)
})

t.test('the client follows the change feed: every change once, in order, ids exact; a stale If-Match is a precondition_failed', async (t) => {
  const { client } = setup()
  // Only what this test does: start after what the others wrote.
  const start = (await client.api.GET('/plants/changes', { params: { query: { limit: 1 } } })).data as { latest: number }
  const controller = new AbortController()
  const followed: string[] = []
  const following = (async () => {
    for await (const change of client.changes({ after: start.latest, limit: 2, wait: 5, signal: controller.signal })) {
      followed.push(`${change.type} ${change.id}`)
      if (followed.length === 4) controller.abort()
    }
  })().catch((err: unknown) => { if (!controller.signal.aborted) throw err })
  await client.createPlant({ id: MAX - 10n, name: 'Aloe' })
  const read = await client.api.GET('/plants/{id}', { params: { path: { id: MAX - 10n } } })
  const etag = read.response.headers.get('etag')!
  t.same(await client.updatePlant(MAX - 10n, { name: 'Aloe vera' }, etag), { id: MAX - 10n, name: 'Aloe vera' })
  const stale = await client.updatePlant(MAX - 10n, { name: 'Agave' }, etag).catch((err: unknown) => err)
  t.match(stale, { status: 412, code: 'precondition_failed' }, 'the ETag read before the update is stale')
  await client.createPlant({ id: MIN + 10n, name: 'Moss' })
  t.match(await client.deletePlant(MAX - 10n, etag).catch((err: unknown) => err), { status: 412, code: 'precondition_failed' }, 'nor does a delete with it')
  await client.deletePlant(MAX - 10n)
  await following
  t.same(followed, [`plant.created ${MAX - 10n}`, `plant.updated ${MAX - 10n}`, `plant.created ${MIN + 10n}`, `plant.deleted ${MAX - 10n}`])
  const replayed: bigint[] = []
  for await (const change of client.changes({ after: start.latest, follow: false })) replayed.push(change.id)
  t.same(replayed, [MAX - 10n, MAX - 10n, MIN + 10n, MAX - 10n], 'read again from the same cursor: the same events, and the iterator ends once caught up')
})

t.test('an answer that is not a success throws a PlantStoreError typed by its code', async (t) => {
  const { client } = setup()
  const url = server.url
  const caught = async (promise: Promise<unknown>): Promise<PlantStoreError> => await promise.then(
    () => { throw new Error('expected a PlantStoreError') },
    (err: unknown) => { if (err instanceof PlantStoreError) return err; throw err })

  const missing = await caught(client.getPlant(MAX - 1n))
  t.match(missing, { status: 404, code: 'plant_not_found', name: 'PlantStoreError' })
  t.match(missing.message, /plant/)
  t.equal(missing.response.status, 404)

  await client.createPlant({ id: 7n, name: 'Calathea', tag: 'tropical' })
  t.match(await caught(client.createPlant({ id: 7n, name: 'Ficus', tag: 'tropical' })), { status: 409, code: 'plant_conflict' })
  t.match(await caught(client.deletePlant(8n)), { status: 404, code: 'plant_not_found' })
  const stranger = createPlantStoreClient({ baseUrl: url, token: 'not-the-token-0123456789' })
  t.match(await caught(stranger.getPlant(7n)), { status: 401, code: 'token_invalid' })
  t.match(await caught(createPlantStoreClient({ baseUrl: url }).plants().next()), { status: 401, code: 'token_missing' })
  const invalid = await caught(client.plants({ limit: 5000 }).next())
  t.match(invalid, { status: 400, code: 'invalid_parameter' })
  t.match(invalid.details, [{ field: 'querystring/limit' }])

  // The operations without a helper: openapi-fetch's own result, its error typed by the contract.
  const { data, error, response } = await client.api.GET('/plants/{id}', { params: { path: { id: 8n } } })
  t.equal(data, undefined)
  t.equal(response.status, 404)
  t.equal(error?.code, 'plant_not_found')
  const ok = await client.api.GET('/plants/{id}', { params: { path: { id: 7n } } })
  t.same(ok.data, { id: 7n, name: 'Calathea', tag: 'tropical' })
})

t.test('a subscribe whose answer is lost is tried again under its key: one subscription, the secret the service made', async (t) => {
  const answered: string[] = []
  let lost = 1
  // The first answer reaches the network and is lost on the way back, as a dropped connection loses it.
  const fetch = async (request: Request): Promise<Response> => {
    const response = await globalThis.fetch(request)
    if (request.method !== 'POST') return response
    answered.push(await response.clone().text())
    if (lost-- > 0) throw new TypeError('fetch failed')
    return response
  }
  const client = createPlantStoreClient({ baseUrl: server.url, token: TOKEN, fetch })
  const created = await client.subscribe({ url: 'http://127.0.0.1:9/lost', events: ['plant.deleted'] })
  t.equal(answered.length, 2, 'sent twice')
  t.equal(answered[1], answered[0], 'answered the same both times')
  t.equal(created.secret, JSON.parse(answered[0]).secret, 'the secret of the first answer')
  const listed = await client.api.GET('/webhooks')
  t.same(listed.data?.filter(({ url }) => url === 'http://127.0.0.1:9/lost').map(({ id }) => id), [created.id], 'one subscription')
  await client.api.DELETE('/webhooks/{id}', { params: { path: { id: created.id } } })
})
