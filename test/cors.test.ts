import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { AUTH, assertError, postPlant, testApp } from './helpers/app.ts'

const APP = 'https://app.example.com'
const DEV = 'http://localhost:5173'
const ORIGINS = { CORS_ORIGINS: `${APP}, ${DEV}` }

const preflight = (origin: string | undefined, method = 'POST', url = '/plants') => ({
  method: 'OPTIONS' as const,
  url,
  headers: {
    ...(origin === undefined ? {} : { origin }),
    'access-control-request-method': method,
    'access-control-request-headers': 'authorization,content-type'
  }
})

const corsHeaders = (res: LightMyRequestResponse) => Object.keys(res.headers).filter((name) => name.startsWith('access-control-'))

t.test('a preflight from an allowed origin answers 204 with the CORS headers, without a token', async (t) => {
  const app = await testApp(t, ORIGINS)
  for (const [origin, method, url] of [[APP, 'POST', '/plants'], [DEV, 'DELETE', '/plants/1'], [APP, 'GET', '/webhooks/wh_1']]) {
    const res = await app.inject(preflight(origin, method, url))
    t.equal(res.statusCode, 204, `${origin} ${method} ${url}`)
    t.equal(res.body, '')
    t.equal(res.headers['access-control-allow-origin'], origin, 'the origin itself, never a list')
    t.equal(res.headers['access-control-allow-methods'], 'GET, POST, PUT, DELETE')
    t.equal(res.headers['access-control-allow-headers'], 'Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, X-Request-Id')
    t.equal(res.headers['access-control-max-age'], '600')
    t.notOk(res.headers['access-control-allow-credentials'], 'no cookies: the API takes bearer tokens')
    t.match(res.headers.vary, /Origin/)
    t.equal(res.headers['x-content-type-options'], 'nosniff', 'with the headers every answer carries')
  }
})

t.test('any other origin gets no CORS header: its preflight is the 405 of any OPTIONS', async (t) => {
  const app = await testApp(t, ORIGINS)
  for (const origin of ['https://evil.example.com', 'https://app.example.com:8443', 'http://app.example.com', 'null', undefined]) {
    const res = await app.inject(preflight(origin))
    t.equal(assertError(t, res, 405, 'method_not_allowed'), 'OPTIONS /plants is not an operation of this API; the path takes GET, HEAD, POST', `preflight from ${origin}`)
    t.same(corsHeaders(res), [])
    const read = await app.inject({ url: '/plants', headers: { ...AUTH, ...(origin === undefined ? {} : { origin }) } })
    t.equal(read.statusCode, 200, 'answered: the browser, not the service, keeps it from the page')
    t.same(corsHeaders(read), [])
  }
})

t.test('an OPTIONS that is no preflight is refused before its body is read', async (t) => {
  const app = await testApp(t, ORIGINS)
  const res = await app.inject({ method: 'OPTIONS', url: '/plants', headers: { 'content-type': 'text/plain' }, payload: 'x'.repeat(10) })
  t.equal(assertError(t, res, 405, 'method_not_allowed'), 'OPTIONS /plants is not an operation of this API; the path takes GET, HEAD, POST', 'a 405, not a 415')
  const bare = await app.inject({ method: 'OPTIONS', url: '/plants', headers: { origin: APP } })
  t.equal(bare.statusCode, 204, 'from an allowed origin, answered as a preflight rather than with a text/plain 400')
})

t.test('answers to an allowed origin carry the CORS headers, errors included', async (t) => {
  const app = await testApp(t, { ...ORIGINS, RATE_LIMIT_PER_TOKEN: '4' })
  const headers = { ...AUTH, origin: APP }
  const answers = [
    await postPlant(app, { id: 1, name: 'Basil' }, { origin: APP }),
    await app.inject({ url: '/plants/1', headers }),
    await app.inject({ url: '/plants/2', headers }),
    await app.inject({ url: '/plants', headers }),
    await app.inject({ url: '/plants', headers }),
    await app.inject({ url: '/plants', headers: { origin: APP } }),
    await app.inject({ url: '/nowhere', headers: { origin: APP } })
  ]
  t.same(answers.map((res) => res.statusCode), [200, 200, 404, 200, 429, 401, 404])
  for (const res of answers) {
    t.equal(res.headers['access-control-allow-origin'], APP, `${res.statusCode}: the page may read it`)
    t.equal(res.headers['access-control-expose-headers'],
      'ETag, Link, Location, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, WWW-Authenticate, X-Request-Id')
    t.match(res.headers.vary, /Origin/)
  }
  assertError(t, answers[4], 429)
})

t.test('CORS_ORIGINS=*: any origin, answered with *', async (t) => {
  const app = await testApp(t, { CORS_ORIGINS: '*' })
  const res = await app.inject(preflight('https://anyone.example'))
  t.equal(res.statusCode, 204)
  t.equal(res.headers['access-control-allow-origin'], '*')
  t.equal((await app.inject({ url: '/plants', headers: { ...AUTH, origin: 'null' } })).headers['access-control-allow-origin'], '*')
  t.same(corsHeaders(await app.inject({ url: '/plants', headers: AUTH })), [], 'none without an Origin')
})

t.test('without CORS_ORIGINS there is no CORS at all, as before', async (t) => {
  const app = await testApp(t)
  const res = await app.inject(preflight(APP))
  t.equal(assertError(t, res, 405, 'method_not_allowed'), 'OPTIONS /plants is not an operation of this API; the path takes GET, HEAD, POST')
  const read = await app.inject({ url: '/plants', headers: { ...AUTH, origin: APP } })
  t.equal(read.statusCode, 200)
  t.same(corsHeaders(read), [])
  t.notOk(read.headers.vary)
})

t.test('the preflight is infrastructure: not in the document', async (t) => {
  const app = await testApp(t, ORIGINS)
  const doc = (await app.inject({ url: '/docs/json' })).json()
  t.same(Object.values<Record<string, unknown>>(doc.paths).filter((item) => 'options' in item), [])
  t.notOk(doc.paths['/*'])
})

// Response headers a page reads without their being exposed (the Fetch standard's
// CORS-safelisted response headers).
const SAFELISTED = new Set(['cache-control', 'content-language', 'content-length', 'content-type', 'expires', 'last-modified', 'pragma'])

t.test('a page may read every header the document declares on an answer, and the request id', async (t) => {
  const app = await testApp(t, ORIGINS)
  const doc = (await app.inject({ url: '/docs/json' })).json()
  const declared = new Set<string>()
  for (const item of Object.values<Record<string, { responses?: Record<string, { headers?: Record<string, unknown> }> }>>(doc.paths)) {
    for (const operation of Object.values(item)) {
      for (const response of Object.values(operation.responses ?? {})) {
        for (const name of Object.keys(response.headers ?? {})) declared.add(name.toLowerCase())
      }
    }
  }
  const exposed = (await app.inject({ url: '/plants', headers: { ...AUTH, origin: APP } })).headers['access-control-expose-headers']
  // Every answer carries X-Request-Id, which the document leaves to the README (Security).
  const readable = [...declared].filter((name) => !SAFELISTED.has(name)).concat('x-request-id').sort()
  t.same(String(exposed).toLowerCase().split(', ').sort(), readable)
})
