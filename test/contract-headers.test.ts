import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { ERROR_CODES, type ErrorCode, type ErrorEntry } from '../schemas/error.ts'
import { declaresRateLimit, RATE_LIMIT_HEADER_NAMES } from '../schemas/rate-limit.ts'
import { apiSecurityHeaders } from '../src/http/answer-headers.ts'
import { AUTH, testApp } from './helpers/app.ts'
import type { Json } from './helpers/document.ts'
import { startReceiver } from './helpers/receiver.ts'
import { testToken, writeTokens } from './helpers/tokens.ts'
import { retryUntil } from './helpers/wait.ts'

// Real answers, over HTTP, held against the headers the contract declares for their
// operation and status: each header it declares required is there, and each header sent
// is declared, but those every answer has, whatever its operation (HTTP's own, the
// request id and the security headers: see docs/security.md).
const EVERY_ANSWER = new Set([
  'content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding',
  'x-request-id', ...Object.keys(apiSecurityHeaders), 'strict-transport-security'
])

// Request headers no operation lists as a parameter: the security scheme and the request body declare them.
const NO_PARAMETER = new Set(['authorization', 'content-type'])

// Every answer after the token is known carries the rate-limit headers (the README says
// so), a 404 too; the contract declares them where a client looks for them
// (schemas/rate-limit.ts), and this test holds it to that choice.
const RATE_LIMIT = new Set(RATE_LIMIT_HEADER_NAMES.map((name) => name.toLowerCase()))

// Quiet apps: no overload check that a busy machine could trip, unless a test wants one.
const QUIET = { MAX_EVENT_LOOP_DELAY_MS: '0', MAX_HEAP_USED_PERCENT: '0' }

interface Call {
  method?: string
  /** The path as the document names it. */
  path: string
  url: string
  headers?: Record<string, string>
  body?: unknown
  /** The status this call is made to meet, or those it may meet. */
  status: number | number[]
  /** The code its error answer must have. */
  code?: ErrorCode
}

interface Served {
  app: FastifyInstance
  /** Makes the call over HTTP, checks its answer's headers against the contract; resolves to the answer and its body. */
  call: (t: Test, call: Call) => Promise<{ res: Response, body: string }>
}

async function serve (t: Test, env: NodeJS.ProcessEnv = {}, prepare?: (app: FastifyInstance) => void): Promise<Served> {
  const app = await testApp(t, { ...QUIET, ...env })
  prepare?.(app)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const doc = (await app.inject({ url: '/docs/json' })).json()
  const call = async (t: Test, { method = 'GET', path, url, headers = {}, body, status, code }: Call) => {
    const sent = body === undefined ? headers : { 'content-type': 'application/json', ...headers }
    const res = await fetch(`${base}${url}`, { method, headers: sent, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await res.text()
    const what = `${method} ${url} ${res.status}`
    t.ok([status].flat().includes(res.status), `${method} ${url} answers ${status}: ${res.status}`)
    const operation = doc.paths[path]?.[method.toLowerCase()]
    const response = operation?.responses[String(res.status)]
    if (response === undefined) {
      t.fail(`${what}: the contract declares no ${res.status} for ${method} ${path}`)
      return { res, body: text }
    }
    const declared = new Map(Object.entries<Json>(response.headers ?? {}).map(([name, header]) => [name.toLowerCase(), header]))
    for (const [name, header] of declared) {
      if (header.required === true) t.ok(res.headers.has(name), `${what} carries ${name}, which the contract requires`)
    }
    for (const name of res.headers.keys()) {
      if (EVERY_ANSWER.has(name) || (RATE_LIMIT.has(name) && !declaresRateLimit(String(res.status)))) continue
      t.ok(declared.has(name), `${what} sends ${name}, which the contract declares`)
    }
    if (res.status >= 400) {
      // An error's answer carries the headers the catalogue, the contract's source, says its code has.
      const answered: ErrorCode = JSON.parse(text).code
      if (code !== undefined) t.equal(answered, code, `${what} is ${code}`)
      for (const name of (ERROR_CODES[answered] as ErrorEntry).headers ?? []) {
        t.ok(res.headers.has(name.toLowerCase()), `${what} ${answered} carries ${name}, as ERROR_CODES says`)
      }
    }
    const parameters = new Set((operation.parameters ?? []).filter((p: Json) => p.in === 'header').map((p: Json) => p.name.toLowerCase()))
    for (const name of Object.keys(sent).map((name) => name.toLowerCase())) {
      if (!NO_PARAMETER.has(name)) t.ok(parameters.has(name), `${what} reads the request header ${name}, a parameter of the contract`)
    }
    return { res, body: text }
  }
  return { app, call }
}

t.test('the answers of every operation carry the headers the contract requires, and those they send are declared', async (t) => {
  const receiver = await startReceiver(t, () => 500)
  let failing = false
  const { app, call } = await serve(t, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_MAX_ATTEMPTS: '1' }, (app) => {
    app.readiness.add('probe', async () => { if (failing) throw new Error('down') })
  })
  await call(t, { path: '/health', url: '/health', status: 200 })
  await call(t, { path: '/health/ready', url: '/health/ready', status: 200 })
  failing = true
  await call(t, { path: '/health/ready', url: '/health/ready', status: 503, code: 'not_ready' })
  await call(t, { path: '/metrics', url: '/metrics', headers: AUTH, status: 200 })

  for (const id of [1, 2]) await call(t, { method: 'POST', path: '/plants', url: '/plants', headers: AUTH, body: { id, name: 'Monstera' }, status: 200 })
  await call(t, { method: 'POST', path: '/plants', url: '/plants', headers: AUTH, body: { id: 1, name: 'Fern' }, status: 409, code: 'plant_conflict' })
  await call(t, { method: 'POST', path: '/plants', url: '/plants', headers: AUTH, body: { id: 'one' }, status: 400, code: 'invalid_body' })
  await call(t, { method: 'POST', path: '/plants', url: '/plants', headers: { ...AUTH, 'content-type': 'text/plain' }, body: 'x', status: 415, code: 'unsupported_media_type' })
  await call(t, { method: 'POST', path: '/plants', url: '/plants', body: { id: 3, name: 'Ivy' }, status: 401, code: 'token_missing' })
  await call(t, { path: '/plants', url: '/plants?limit=1', headers: AUTH, status: 200 })
  await call(t, { path: '/plants', url: '/plants', headers: { authorization: 'Basic eDp5' }, status: 401, code: 'authorization_malformed' })

  const { res: plant } = await call(t, { path: '/plants/{id}', url: '/plants/1', headers: AUTH, status: 200 })
  await call(t, { path: '/plants/{id}', url: '/plants/1', headers: { ...AUTH, 'if-none-match': plant.headers.get('etag') ?? '' }, status: 304 })
  await call(t, { path: '/plants/{id}', url: '/plants/1', headers: { ...AUTH, 'if-none-match': '"another"' }, status: 200 })
  await call(t, { path: '/plants/{id}', url: '/plants/9', headers: AUTH, status: 404, code: 'plant_not_found' })
  await call(t, { path: '/plants/{id}', url: '/plants/x', headers: AUTH, status: 400, code: 'invalid_parameter' })
  await call(t, { path: '/plants/{id}', url: '/plants/1', headers: { authorization: 'Bearer wrong-token-0123456789' }, status: 401, code: 'token_invalid' })
  await call(t, { method: 'DELETE', path: '/plants/{id}', url: '/plants/2', headers: AUTH, status: 204 })
  await call(t, { method: 'DELETE', path: '/plants/{id}', url: '/plants/2', headers: AUTH, status: 404, code: 'plant_not_found' })

  const { body } = await call(t, { method: 'POST', path: '/webhooks', url: '/webhooks', headers: AUTH, body: { url: receiver.url }, status: 201 })
  const { id } = JSON.parse(body)
  await call(t, { method: 'POST', path: '/webhooks', url: '/webhooks', headers: AUTH, body: { url: 'http://127.0.0.1:0/hook' }, status: 400, code: 'webhook_url_refused' })
  await call(t, { method: 'POST', path: '/webhooks', url: '/webhooks', headers: AUTH, body: { url: 'ftp://x' }, status: 400, code: 'invalid_body' })
  await call(t, { path: '/webhooks', url: '/webhooks', headers: AUTH, status: 200 })
  await call(t, { path: '/webhooks/{id}', url: `/webhooks/${id}`, headers: AUTH, status: 200 })
  await call(t, { path: '/webhooks/{id}', url: `/webhooks/wh_${'0'.repeat(32)}`, headers: AUTH, status: 404, code: 'webhook_not_found' })
  // A delivery that failed its one attempt may be started over.
  await call(t, { method: 'POST', path: '/plants', url: '/plants', headers: AUTH, body: { id: 4, name: 'Pothos' }, status: 200 })
  const { value: deliveries } = await retryUntil(async () => await app.inject({ url: `/webhooks/${id}/deliveries`, headers: AUTH }),
    (res) => res.json()[0]?.status === 'failed', 10_000)
  const delivery = deliveries.json()[0].id
  await call(t, { path: '/webhooks/{id}/deliveries', url: `/webhooks/${id}/deliveries`, headers: AUTH, status: 200 })
  const retry = { method: 'POST', path: '/webhooks/{id}/deliveries/{deliveryId}/retry', url: `/webhooks/${id}/deliveries/${delivery}/retry`, headers: AUTH }
  await call(t, { ...retry, status: 202 })
  await call(t, { ...retry, status: 409, code: 'delivery_pending' })
  await call(t, { method: 'DELETE', path: '/webhooks/{id}', url: `/webhooks/${id}`, headers: AUTH, status: 204 })
})

t.test('a token without the scope: 403 with its challenge', async (t) => {
  const reader = testToken('reader', ['plants:read'])
  const { call } = await serve(t, { API_TOKENS: '', API_TOKENS_FILE: writeTokens(`${t.testdir()}/tokens.json`, [reader]) })
  await call(t, { method: 'POST', path: '/plants', url: '/plants', headers: { authorization: `Bearer ${reader.value}` }, body: { id: 1, name: 'Ivy' }, status: 403, code: 'insufficient_scope' })
  await call(t, { path: '/webhooks', url: '/webhooks', headers: { authorization: `Bearer ${reader.value}` }, status: 403, code: 'insufficient_scope' })
})

t.test('both 429s: a token past its rate, an address locked out', async (t) => {
  const { call } = await serve(t, { RATE_LIMIT_PER_TOKEN: '1', AUTH_FAILURE_LIMIT: '1' })
  await call(t, { path: '/plants', url: '/plants', headers: AUTH, status: 200 })
  await call(t, { path: '/plants', url: '/plants', headers: AUTH, status: 429, code: 'rate_limited' })
  await call(t, { path: '/plants', url: '/plants', headers: { authorization: 'Bearer wrong-token-0123456789' }, status: 401, code: 'token_invalid' })
  await call(t, { path: '/plants', url: '/plants', headers: { authorization: 'Bearer wrong-token-0123456789' }, status: 429, code: 'auth_locked_out' })
})

t.test('each 503: store_busy, overloaded, store_unavailable, shutting_down', async (t) => {
  t.test('store_busy', async (t) => {
    const path = `${t.testdir()}/plants.db`
    const { call } = await serve(t, { WRITE_QUEUE_LIMIT_BYTES: '1024', DATABASE_URL: `sqlite:${path}` })
    // Another writer holds the lock until the first store_busy (200 ms at most, within the
    // 250 ms a batch waits for it): the first create of the burst waits for it, and as one
    // plant of 450 characters (1 KiB as the queue counts it) fills the queue, every create
    // arriving meanwhile is refused at once.
    const locker = new Database(path)
    t.teardown(() => locker.close())
    locker.exec('BEGIN IMMEDIATE')
    let locked = true
    const unlock = (): void => {
      if (locked) locker.exec('COMMIT')
      locked = false
    }
    const timer = setTimeout(unlock, 200)
    const answers = await Promise.all(Array.from({ length: 40 }, async (_, id) => {
      const answer = await call(t, { method: 'POST', path: '/plants', url: '/plants', headers: AUTH, body: { id, name: 'p'.repeat(450) }, status: [200, 503], code: 'store_busy' })
      if (answer.res.status === 503) unlock()
      return answer
    }))
    clearTimeout(timer)
    unlock()
    t.ok(answers.some(({ res }) => res.status === 503), 'some answered 503')
  })

  t.test('overloaded', async (t) => {
    const { call } = await serve(t, { MAX_HEAP_USED_PERCENT: '0.001' })
    await sleep(1100) // the pressure is sampled once a second
    await call(t, { path: '/plants', url: '/plants', headers: AUTH, status: 503, code: 'overloaded' })
    await call(t, { path: '/health', url: '/health', status: 200 })
  })

  t.test('store_unavailable', async (t) => {
    const path = `${t.testdir()}/plants.db`
    const { call } = await serve(t, { DATABASE_URL: `sqlite:${path}` })
    const locker = new Database(path)
    t.teardown(() => locker.close())
    locker.exec('BEGIN IMMEDIATE') // another writer holds the lock
    const { res } = await call(t, { method: 'POST', path: '/plants', url: '/plants', headers: AUTH, body: { id: 1, name: 'Ivy' }, status: 503, code: 'store_unavailable' })
    t.equal(res.headers.get('retry-after'), '1', 'when to try the store again')
    locker.exec('COMMIT')
  })

  t.test('shutting_down', async (t) => {
    let release = (): void => {}
    const held = new Promise<void>((resolve) => { release = resolve })
    const { app, call } = await serve(t, {}, (app) => app.addHook('preClose', async () => await held))
    const closed = app.close()
    await sleep(50)
    await call(t, { path: '/health', url: '/health', status: 503, code: 'shutting_down' })
    await call(t, { path: '/plants', url: '/plants', headers: AUTH, status: 503, code: 'shutting_down' })
    release()
    await closed
  })
})
