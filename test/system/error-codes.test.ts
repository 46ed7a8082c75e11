import { readFile } from 'node:fs/promises'
import { Value } from '@sinclair/typebox/value'
import t from 'tap'
import { ERROR_CODES, ErrorBody, type ErrorCode } from '../../schemas/error.ts'
import { AUTH, TOKEN, assertError, postPlant, testApp } from '../helpers/app.ts'
import { logsArrived, startServer, waitForLine } from '../helpers/server.ts'

t.test('the document lists every code, and every error example is an Error of its status and code', async (t) => {
  const app = await testApp(t)
  await app.ready()
  const doc = app.swagger() as any
  t.same(doc.components.schemas.Error.properties.code.enum, Object.keys(ERROR_CODES))
  const seen = new Set<string>()
  for (const [path, operations] of Object.entries<any>(doc.paths)) {
    for (const [method, operation] of Object.entries<any>(operations)) {
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        if (Number(status) < 400) continue
        const examples = response.content['application/json'].examples
        t.ok(Object.keys(examples).length > 0, `${method} ${path} ${status} has examples`)
        for (const [name, { $ref }] of Object.entries<any>(examples)) {
          seen.add(name)
          t.equal($ref, `#/components/examples/${name}`)
          const { value } = doc.components.examples[name]
          t.equal(value.code, name, `${method} ${path} ${status}: the example ${name} has its code`)
          t.equal(ERROR_CODES[name as ErrorCode].status, Number(status), `${name} belongs to ${status}`)
          t.ok(Value.Check(ErrorBody, value), `the example ${name} is an Error`)
          t.match(response.description, `\`${name}\``, `the description of ${status} names ${name}`)
        }
      }
    }
  }
  // Path-level answers are not any operation's: they are in the enum and the README.
  const notOperations = ['route_not_found', 'method_not_allowed']
  t.same([...seen, ...notOperations].sort(), Object.keys(ERROR_CODES).sort(), 'every code is an example somewhere')
})

t.test('causes that share a status are told apart by their code', async (t) => {
  const app = await testApp(t)
  assertError(t, await app.inject({ url: '/nothing/here' }), 404, 'route_not_found')
  assertError(t, await app.inject({ url: '/plants/42', headers: AUTH }), 404, 'plant_not_found')
  assertError(t, await app.inject({ url: '/webhooks/wh_00000000000000000000000000000000', headers: AUTH }), 404, 'webhook_not_found')

  assertError(t, await postPlant(app, '{"id":1,'), 400, 'invalid_json')
  const invalid = await postPlant(app, { id: 'one', name: 7 })
  t.equal(assertError(t, invalid, 400, 'invalid_body'), 'body/id must be an integer from -9223372036854775808 to 9223372036854775807, body/name must be a string')
  t.same(invalid.json().details, [
    { field: 'body/id', message: 'must be an integer from -9223372036854775808 to 9223372036854775807' },
    { field: 'body/name', message: 'must be a string' }
  ], 'one detail per field, each naming it')
  const missing = await postPlant(app, {})
  t.same(missing.json().details, [{ field: 'body/id', message: 'is required' }, { field: 'body/name', message: 'is required' }])
  const parameter = await app.inject({ url: '/plants/x', headers: AUTH })
  assertError(t, parameter, 400, 'invalid_parameter')
  t.same(parameter.json().details, [{ field: 'params/id', message: 'must be an integer from -9223372036854775808 to 9223372036854775807' }])
  t.notOk('details' in (await postPlant(app, '{')).json(), 'a body that is not JSON has no fields to name')

  const strict = await testApp(t, { RATE_LIMIT_PER_TOKEN: '2', AUTH_FAILURE_LIMIT: '3' })
  const limited = [await strict.inject({ url: '/plants', headers: AUTH }), await strict.inject({ url: '/plants', headers: AUTH }),
    await strict.inject({ url: '/plants', headers: AUTH })]
  assertError(t, limited[2], 429, 'rate_limited')

  for (let i = 0; i < 3; i++) assertError(t, await strict.inject({ url: '/plants', headers: { authorization: 'Bearer wrong-token-0000000000' } }), 401, 'token_invalid')
  const locked = await strict.inject({ url: '/plants', headers: { authorization: 'Bearer wrong-token-0000000000' } })
  assertError(t, locked, 429, 'auth_locked_out')
  t.ok(Number(locked.headers['retry-after']) > 0, 'with Retry-After')
})

t.test('a method the path does not have answers 405 with Allow, to anyone, before a body is read', async (t) => {
  const app = await testApp(t)
  for (const [method, url, allow] of [
    ['PATCH', '/plants/2', 'DELETE, GET, HEAD, PUT'],
    ['PATCH', '/plants', 'GET, HEAD, POST'],
    ['DELETE', '/plants', 'GET, HEAD, POST'],
    ['OPTIONS', '/plants', 'GET, HEAD, POST'],
    ['POST', '/plants/2', 'DELETE, GET, HEAD, PUT'],
    ['PUT', '/plants/', 'GET, HEAD, POST'],
    ['POST', '/webhooks/wh_x', 'DELETE, GET, HEAD'],
    ['GET', '/webhooks/wh_x/deliveries/1/retry', 'POST'],
    ['POST', '/health', 'GET, HEAD']
  ] as const) {
    const res = await app.inject({ method, url, headers: { 'content-type': 'application/json' }, payload: '{"id":' })
    const message = assertError(t, res, 405, 'method_not_allowed')
    t.equal(res.headers.allow, allow, `${method} ${url}: Allow: ${allow}`)
    t.equal(message, `${method} ${url} is not an operation of this API; the path takes ${allow}`)
  }
  t.equal((await app.inject({ method: 'HEAD', url: '/plants', headers: AUTH })).statusCode, 200, 'HEAD of a GET route is an operation')
})

t.test('a trailing slash names the same route', async (t) => {
  const app = await testApp(t)
  t.equal((await app.inject({ method: 'POST', url: '/plants/', headers: { ...AUTH, 'content-type': 'application/json' }, payload: '{"id":7,"name":"Fern"}' })).statusCode, 200)
  t.same((await app.inject({ url: '/plants/', headers: AUTH })).json(), [{ id: 7, name: 'Fern' }], 'GET /plants/ lists, as GET /plants')
  t.same((await app.inject({ url: '/plants/7/', headers: AUTH })).json(), { id: 7, name: 'Fern' })
  t.equal((await app.inject({ url: '/health/' })).statusCode, 200)
})

t.test('a query parameter the operation does not take is refused, by name', async (t) => {
  const app = await testApp(t)
  const page = await app.inject({ url: '/plants?page=2', headers: AUTH })
  t.equal(assertError(t, page, 400, 'unknown_parameter'), 'GET /plants takes only limit, after, tag; unknown: page')
  t.same(page.json().details, [{ field: 'querystring/page', message: 'is not a parameter of this operation, which takes only limit, after, tag' }])
  const one = await app.inject({ url: '/plants/1?verbose=true&limit=2', headers: AUTH })
  t.equal(assertError(t, one, 400, 'unknown_parameter'), 'GET /plants/{id} takes no query parameters; unknown: verbose, limit')
  t.equal((await app.inject({ url: '/plants?limit=1&after=0&tag=x', headers: AUTH })).statusCode, 200, 'known ones are fine')

  // However many a URL holds, the answer names a few, each shortened.
  const many = Array.from({ length: 500 }, (_, i) => `${'p'.repeat(60)}${i}=1`).join('&')
  const flood = await app.inject({ url: `/plants?${many}`, headers: AUTH })
  const message = assertError(t, flood, 400, 'unknown_parameter')
  t.ok(message.length < 700, `the message stays short (${message.length} characters)`)
  t.equal(flood.json().details.length, 10, 'ten named')
  t.equal(assertError(t, await app.inject({ url: '/plants?page=2' }), 401, 'token_missing'), 'missing bearer token: send the header "Authorization: Bearer <token>"',
    'a stranger learns nothing of the parameters')
})

t.test('an Authorization header that is not "Bearer <token>" says so, and is not counted as a guess', async (t) => {
  const app = await testApp(t, { AUTH_FAILURE_LIMIT: '3' })
  for (const header of [TOKEN, `Basic ${Buffer.from(`me:${TOKEN}`).toString('base64')}`, `Token ${TOKEN}`, `"Bearer" ${TOKEN}`, 'Bearer', 'Bearer    ', '   ']) {
    for (let i = 0; i < 2; i++) {
      const res = await app.inject({ url: '/plants', headers: { authorization: header } })
      t.equal(assertError(t, res, 401, 'authorization_malformed'), 'the Authorization header is not a bearer token: send "Authorization: Bearer <token>"', JSON.stringify(header))
      t.equal(res.headers['www-authenticate'], 'Bearer realm="plant-store", error="invalid_request"')
    }
  }
  t.equal((await app.inject({ url: '/plants', headers: AUTH })).statusCode, 200, '14 malformed headers locked nothing out')
  t.equal((await app.inject({ url: '/plants', headers: { authorization: `bearer ${TOKEN}` } })).statusCode, 200, 'the scheme is case-insensitive')
  // What follows "Bearer " is a token to look up, whatever its characters: a wrong one is a guess.
  assertError(t, await app.inject({ url: '/plants', headers: { authorization: `Bearer "${TOKEN}"` } }), 401, 'token_invalid')
})

t.test('a lockout is logged at warn with the client address, once, and answered auth_locked_out', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN, AUTH_FAILURE_LIMIT: '2' })
  for (let i = 0; i < 2; i++) assertError(t, await server.request('GET', '/plants', { token: 'not-the-token-000000' }), 401, 'token_invalid')
  for (let i = 0; i < 2; i++) assertError(t, await server.request('GET', '/plants', { token: 'not-the-token-000000' }), 429, 'auth_locked_out')
  const line = JSON.parse(await waitForLine(server.stdout, /locked out/))
  t.equal(line.level, 40, 'at warn')
  t.equal(line.client, '127.0.0.1')
  t.equal(line.code, 'auth_locked_out')
  t.match(line.msg, /client 127\.0\.0\.1 locked out for a minute: 2 rejected tokens/)
  await logsArrived(server)
  t.equal(server.stdout.filter((l) => /locked out for/.test(l)).length, 1, 'one line per lockout, not one per refused request')
})

t.test('docs/api.md lists every code with its status', async (t) => {
  const readme = await readFile(new URL('../../docs/api.md', import.meta.url), 'utf8')
  const rows = [...readme.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map(([, code, status]) => [code, Number(status)])
  t.same(rows, Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status]))
})

t.test('a full write queue answers store_busy from every operation that writes, and the document declares it for each', async (t) => {
  // 1024 bytes hold eight writes (128 bytes each, with no name): the rest of a burst is refused at once.
  const app = await testApp(t, { WRITE_QUEUE_LIMIT_BYTES: '1024', WEBHOOK_ALLOW_PRIVATE: 'true' })
  await app.ready()
  const declared = (method: string, path: string): boolean =>
    Object.hasOwn((app.swagger() as any).paths[path][method].responses['503'].content['application/json'].examples, 'store_busy')
  const burst = async (request: (i: number) => Promise<{ statusCode: number, json: () => any }>): Promise<number> =>
    (await Promise.all(Array.from({ length: 40 }, async (_, i) => await request(i))))
      .filter((res) => res.statusCode === 503 && res.json().code === 'store_busy').length
  for (let id = 0; id < 40; id++) await postPlant(app, { id, name: 'p' })
  const writes: Array<[string, string, (i: number) => Promise<{ statusCode: number, json: () => any }>]> = [
    ['post', '/plants', async (i) => await postPlant(app, { id: 100 + i, name: 'p' })],
    ['put', '/plants/{id}', async (i) => await app.inject({ method: 'PUT', url: `/plants/${i}`, headers: AUTH, payload: { name: 'q' } })],
    ['delete', '/plants/{id}', async (i) => await app.inject({ method: 'DELETE', url: `/plants/${i}`, headers: AUTH })],
    ['post', '/webhooks', async () => await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: 'http://127.0.0.1:9/hook' } })],
    ['delete', '/webhooks/{id}', async () => await app.inject({ method: 'DELETE', url: '/webhooks/wh_00000000000000000000000000000000', headers: AUTH })]
  ]
  for (const [method, path, request] of writes) {
    const busy = await burst(request)
    t.ok(busy > 0, `${method.toUpperCase()} ${path}: ${busy} of 40 answered store_busy`)
    t.ok(declared(method, path), `${method.toUpperCase()} ${path} declares store_busy`)
  }
  t.ok(declared('post', '/webhooks/{id}/deliveries/{deliveryId}/retry'), 'so does the retry, a write too')
})
