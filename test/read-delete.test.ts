import t from 'tap'
import { AUTH, assertError, postPlant, testApp } from './helpers/app.ts'
import { allPages } from './helpers/store-suite.ts'

t.test('GET /plants, GET and DELETE /plants/{id} need the token', async (t) => {
  const app = await testApp(t)
  for (const [method, url] of [['GET', '/plants'], ['GET', '/plants/1'], ['DELETE', '/plants/1']] as const) {
    const res = await app.inject({ method, url })
    assertError(t, res, 401, `${method} ${url}`)
    t.match(res.headers['www-authenticate'], /^Bearer/)
  }
})

t.test('a DELETE never reads a body: a Content-Type or content sent with it changes nothing', async (t) => {
  const app = await testApp(t)
  const sent = [
    { 'content-type': 'application/x-www-form-urlencoded', payload: '' },
    { 'content-type': 'text/plain', payload: 'x' },
    { 'content-type': 'application/json', payload: '{"id":' },
    { 'content-type': 'application/json', payload: `[${'0,'.repeat(1024 * 1024)}0]` }
  ]
  for (const [i, { payload, ...headers }] of sent.entries()) {
    t.equal((await postPlant(app, { id: i, name: 'Monstera' })).statusCode, 200)
    const res = await app.inject({ method: 'DELETE', url: `/plants/${i}`, headers: { ...AUTH, ...headers }, payload })
    t.equal(res.statusCode, 204, `${headers['content-type']}, ${payload.length} bytes: deleted`)
    assertError(t, await app.inject({ url: `/plants/${i}`, headers: AUTH }), 404, 'plant_not_found')
  }
})

t.test('a bad id in the path answers 400 naming the rule', async (t) => {
  const app = await testApp(t)
  for (const id of ['abc', '1.5', '1e3', '9223372036854775808', '-9223372036854775809', '0x10', '%20']) {
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await app.inject({ method, url: `/plants/${id}`, headers: AUTH })
      t.match(assertError(t, res, 400, `${method} ${id}`), /params\/id must be an integer from -9223372036854775808 to 9223372036854775807/)
    }
  }
})

t.test('bad list parameters answer 400 naming the parameter', async (t) => {
  const app = await testApp(t)
  const cases: Array<[string, RegExp]> = [
    ['limit=0', /querystring\/limit must be at least 1/],
    ['limit=1001', /querystring\/limit must be at most 1000/],
    ['limit=-3', /querystring\/limit must be at least 1/],
    ['limit=abc', /querystring\/limit must be an integer/],
    ['limit=2.5', /querystring\/limit must be an integer/],
    ['limit=1&limit=2', /querystring\/limit/],
    ['after=x', /querystring\/after must be an integer from/],
    ['after=9223372036854775808', /querystring\/after must be an integer from/]
  ]
  for (const [query, message] of cases) {
    t.match(assertError(t, await app.inject({ url: `/plants?${query}`, headers: AUTH }), 400, query), message)
  }
})

t.test('the default page is 100 plants and the largest 1000', async (t) => {
  const app = await testApp(t)
  for (let i = 0; i < 1100; i += 100) {
    await Promise.all(Array.from({ length: 100 }, async (_, j) => await postPlant(app, { id: i + j, name: 'p' })))
  }
  const first = await app.inject({ url: '/plants', headers: AUTH })
  t.equal(first.json().length, 100)
  t.equal(first.headers.link, '</plants?limit=100&after=99>; rel="next"')
  t.equal((await app.inject({ url: '/plants?limit=1000', headers: AUTH })).json().length, 1000)
})

t.test('the next link keeps a tag with spaces, & and unicode intact', async (t) => {
  const app = await testApp(t)
  const tag = 'sun & shade / 日陰 +1'
  for (let id = 1; id <= 6; id++) await postPlant(app, { id, name: `p${id}`, tag: id % 2 === 0 ? tag : 'other' })
  const pages = await allPages(app, `/plants?limit=1&tag=${encodeURIComponent(tag)}`)
  t.same(pages.map((p) => p.id), [2, 4, 6])
})

t.test('a listed plant carries its id; the Plant fields are still name and tag', async (t) => {
  const app = await testApp(t)
  await postPlant(app, { id: 3, name: 'Ivy', tag: 'climber', extra: 'dropped' })
  t.equal((await app.inject({ url: '/plants', headers: AUTH })).body, '[{"id":3,"name":"Ivy","tag":"climber"}]')
})
