import t from 'tap'
import { AUTH, assertError, postPlant, testApp } from './helpers/app.ts'

t.test('a body that is not JSON answers 415', async (t) => {
  const app = await testApp(t)
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
    const res = await postPlant(app, 'id=1&name=a', { 'content-type': type })
    t.match(assertError(t, res, 415), /send application\/json/, type)
  }
})

t.test('a body over the limit answers 413, and the limit is configurable', async (t) => {
  const app = await testApp(t)
  t.match(assertError(t, await postPlant(app, { id: 1, name: 'x'.repeat(16 * 1024) }), 413), /limit of 16384 bytes/)
  // The default holds the largest plant and subscription, every character escaped (an emoji as a surrogate pair).
  const escaped = (count: number): string => '\\ud83c\\udf3f'.repeat(count)
  const plant = `{"id":-9223372036854775808,"name":"${escaped(1000)}","tag":"${escaped(100)}"}`
  t.equal((await postPlant(app, plant)).statusCode, 200, `the largest plant: ${plant.length} bytes`)
  const escape = (text: string): string => [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')
  const url = `{"url":"${escape('http://' + 'a'.repeat(2040))}"}`
  const subscription = await app.inject({ method: 'POST', url: '/webhooks', headers: { ...AUTH, 'content-type': 'application/json' }, payload: url })
  t.equal(assertError(t, subscription, 400, 'webhook_url_refused'), 'the url must be https', `the longest url: ${url.length} bytes`)
  const small = await testApp(t, { BODY_LIMIT: '64' })
  assertError(t, await postPlant(small, { id: 1, name: 'x'.repeat(64) }), 413)
  t.equal((await postPlant(small, { id: 1, name: 'short' })).statusCode, 200)
})

t.test('unknown paths answer 404 route_not_found in the Error shape', async (t) => {
  const app = await testApp(t)
  for (const [method, url] of [['GET', '/nope'], ['POST', '/plants/1/x'], ['GET', '/plants/1/'.repeat(3)], ['DELETE', '/webhooks/x/y']] as const) {
    const res = await app.inject({ method, url, headers: AUTH })
    t.match(assertError(t, res, 404, 'route_not_found'), new RegExp(`no route for ${method}`), `${method} ${url}`)
  }
})

t.test('a file of the docs that is not there is a 404, not a 405 naming the method asked', async (t) => {
  const app = await testApp(t)
  for (const method of ['GET', 'HEAD'] as const) {
    for (const url of ['/docs/static/nope.js', '/docs/static/a/', '/docs/static/.hidden']) {
      const res = await app.inject({ method, url })
      t.equal(res.statusCode, 404, `${method} ${url}`)
      t.notOk(res.headers.allow, 'no Allow')
      if (method === 'GET') t.match(assertError(t, res, 404, 'route_not_found'), `no route for GET ${url}`)
    }
  }
  const other = await app.inject({ method: 'POST', url: '/docs/static/nope.js' })
  t.equal(other.statusCode, 405, 'another method is still a 405')
  t.equal(other.headers.allow, 'GET, HEAD')
})

t.test('an unexpected failure answers 500 with a generic message; the cause stays in the log', async (t) => {
  const app = await testApp(t)
  app.get('/explode', async () => { throw new Error('secret database password in a stack trace') })
  const res = await app.inject({ url: '/explode' })
  const message = assertError(t, res, 500)
  t.notMatch(message, /secret/)
  t.match(message, /internal server error/)
})

t.test('no response ever has Fastify\'s default error shape', async (t) => {
  const app = await testApp(t)
  const responses = await Promise.all([
    postPlant(app, '{', {}),
    postPlant(app, '', { 'content-type': 'application/json' }),
    postPlant(app, 'x', { 'content-type': 'text/plain' }),
    postPlant(app, { id: 1 }, { authorization: undefined }),
    app.inject({ url: '/missing' }),
    app.inject({ method: 'POST', url: '/plants', headers: { ...AUTH, 'content-type': 'application/json', 'content-length': '5' }, payload: '{"id":1,"name":"a"}' })
  ])
  const codes = ['invalid_json', 'invalid_body', 'unsupported_media_type', 'token_missing', 'route_not_found', 'invalid_request']
  for (const [i, res] of responses.entries()) {
    const body = res.json()
    t.notOk('statusCode' in body, `${res.statusCode}: ${res.body}`)
    t.equal(body.error, res.statusCode)
    t.equal(body.code, codes[i])
  }
})
