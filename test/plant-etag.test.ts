import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { AUTH, assertError, postPlant, testApp } from './helpers/app.ts'

const STRONG_TAG = /^"[A-Za-z0-9_-]{22}"$/

const get = async (app: FastifyInstance, ifNoneMatch?: string, url = '/plants/1', method: 'GET' | 'HEAD' = 'GET') =>
  await app.inject({ method, url, headers: { ...AUTH, ...(ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch }) } })

t.test('GET /plants/{id} answers with a strong ETag, the same while the plant is', async (t) => {
  const app = await testApp(t)
  await postPlant(app, { id: 1, name: 'Monstera', tag: 'tropical' })
  const first = await get(app)
  t.equal(first.statusCode, 200)
  t.match(first.headers.etag, STRONG_TAG)
  t.equal(first.headers['cache-control'], 'private, no-cache', 'kept by the client only, revalidated before each use')
  t.equal((await get(app)).headers.etag, first.headers.etag)
  await postPlant(app, { id: 2, name: 'Monstera', tag: 'tropical' })
  t.not((await get(app, undefined, '/plants/2')).headers.etag, first.headers.etag, 'another plant, another tag')
})

t.test('If-None-Match naming the ETag answers 304 without a body, with the ETag', async (t) => {
  const app = await testApp(t)
  await postPlant(app, { id: 1, name: 'Fern' })
  const etag = (await get(app)).headers.etag as string
  const matching = [etag, `W/${etag}`, `"other", ${etag}`, `W/"other",W/${etag}`, '*', ' * ']
  for (const ifNoneMatch of matching) {
    const res = await get(app, ifNoneMatch)
    t.equal(res.statusCode, 304, ifNoneMatch)
    t.equal(res.body, '', 'no body')
    t.equal(res.headers.etag, etag)
    t.equal(res.headers['cache-control'], 'private, no-cache')
    t.notOk(res.headers['content-type'])
  }
  t.equal((await get(app, etag, '/plants/1', 'HEAD')).statusCode, 304, 'HEAD too')
  for (const ifNoneMatch of ['"other"', `${etag.slice(0, -2)}"`, etag.slice(1, -1), `W/"x", ${etag}x`, '', `*, ${etag.slice(1)}`]) {
    const res = await get(app, ifNoneMatch)
    t.equal(res.statusCode, 200, `${ifNoneMatch}: a full answer`)
    t.same(res.json(), { id: 1, name: 'Fern' })
    t.equal(res.headers.etag, etag)
  }
})

t.test('a plant deleted and created again with another name has another ETag', async (t) => {
  const app = await testApp(t)
  await postPlant(app, { id: 1, name: 'Basil' })
  const before = (await get(app)).headers.etag as string
  t.equal((await app.inject({ method: 'DELETE', url: '/plants/1', headers: AUTH })).statusCode, 204)
  assertError(t, await get(app, before), 404, 'gone, whatever the client holds')
  assertError(t, await get(app, '*'), 404, '* matches only a plant that exists')
  await postPlant(app, { id: 1, name: 'Mint' })
  const after = await get(app, before)
  t.equal(after.statusCode, 200, 'the old ETag no longer matches')
  t.same(after.json(), { id: 1, name: 'Mint' })
  t.not(after.headers.etag, before)

  await app.inject({ method: 'DELETE', url: '/plants/1', headers: AUTH })
  await postPlant(app, { id: 1, name: 'Mint', tag: '' })
  t.not((await get(app)).headers.etag, after.headers.etag, 'an empty tag is not no tag')
})

t.test('the document declares the ETag on the 200 and a 304 without a body', async (t) => {
  const app = await testApp(t)
  const { responses } = (await app.inject({ url: '/docs/json' })).json().paths['/plants/{id}'].get
  for (const status of ['200', '304']) {
    t.ok(responses[status].headers.ETag, `${status} declares ETag`)
    t.ok(responses[status].headers['Cache-Control'], `${status} declares Cache-Control`)
  }
  t.notOk(responses['304'].content, '304 has no body')
})
