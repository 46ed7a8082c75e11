import t from 'tap'
import { AUTH, assertError, postPlant, testApp } from './helpers/app.ts'

const plant = { id: 1, name: 'Basil' }

t.test('no Authorization header: 401 with a Bearer challenge', async (t) => {
  const app = await testApp(t)
  const res = await postPlant(app, plant, { authorization: undefined })
  t.match(assertError(t, res, 401), /missing bearer token/)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="plant-store"')
})

t.test('a wrong token: 401 with error="invalid_token"', async (t) => {
  const app = await testApp(t)
  const res = await postPlant(app, plant, { authorization: 'Bearer not-the-token' })
  t.match(assertError(t, res, 401), /not valid/)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="plant-store", error="invalid_token"')
})

t.test('other schemes and malformed headers: 401', async (t) => {
  const app = await testApp(t)
  for (const authorization of ['Basic dGVzdDp0ZXN0', 'test-token-0123456789', 'Bearer', 'Bearer ', 'Bearertest-token-0123456789', 'Token test-token-0123456789']) {
    const res = await postPlant(app, plant, { authorization })
    assertError(t, res, 401)
    t.match(res.headers['www-authenticate'], /^Bearer/, authorization)
  }
})

t.test('the scheme name is case-insensitive (RFC 7235)', async (t) => {
  const app = await testApp(t)
  for (const [i, scheme] of ['bearer', 'BEARER', 'BeArEr'].entries()) {
    const res = await postPlant(app, { id: i, name: 'Mint' }, { authorization: `${scheme} test-token-0123456789` })
    t.equal(res.statusCode, 200, scheme)
  }
})

t.test('every token listed in API_TOKENS is accepted, and only those', async (t) => {
  const app = await testApp(t, { API_TOKENS: 'first-token-0123456789, second-token-0123456789' })
  t.equal((await postPlant(app, { id: 1, name: 'a' }, { authorization: 'Bearer first-token-0123456789' })).statusCode, 200)
  t.equal((await postPlant(app, { id: 2, name: 'b' }, { authorization: 'Bearer second-token-0123456789' })).statusCode, 200)
  assertError(t, await postPlant(app, { id: 3, name: 'c' }, { authorization: 'Bearer first-token-0123456789,second-token-0123456789' }), 401)
  assertError(t, await postPlant(app, { id: 4, name: 'd' }, { authorization: 'Bearer first' }), 401)
})

t.test('authentication is decided before the body is read or validated', async (t) => {
  const app = await testApp(t)
  assertError(t, await postPlant(app, '{"id":"bad"}', { authorization: undefined }), 401)
  assertError(t, await postPlant(app, '{not json', { authorization: 'Bearer wrong' }), 401)
  assertError(t, await postPlant(app, 'text', { authorization: undefined, 'content-type': 'text/plain' }), 401)
  const big = await testApp(t, { BODY_LIMIT: '100' })
  assertError(t, await postPlant(big, { id: 1, name: 'x'.repeat(200) }, { authorization: undefined }), 401)
})

t.test('the documentation is public', async (t) => {
  const app = await testApp(t)
  for (const url of ['/docs', '/docs/', '/docs/json', '/docs/yaml', '/docs/static/index.html']) {
    const res = await app.inject({ url })
    t.ok(res.statusCode === 200 || res.statusCode === 302, `${url} answers ${res.statusCode} without a token`)
  }
  const json = (await app.inject({ url: '/docs/json' })).json()
  t.same(json.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', description: json.components.securitySchemes.bearerAuth.description })
  t.same(json.security, [{ bearerAuth: [] }], 'bearer auth applies to every operation')
})

t.test('with a valid token the same request succeeds', async (t) => {
  const app = await testApp(t)
  const res = await postPlant(app, plant, AUTH)
  t.equal(res.statusCode, 200)
})
