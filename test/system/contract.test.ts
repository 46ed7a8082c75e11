import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { generateContract } from '../../scripts/contract.ts'
import { AUTH, assertError, testApp } from '../helpers/app.ts'
import { HTTP_URL_PATTERN } from '../../schemas/url.ts'
import { schemaChecker } from '../helpers/document.ts'

t.test('openapi.yaml is exactly what the app generates', async (t) => {
  const committed = await readFile('openapi.yaml', 'utf8')
  t.equal(await generateContract(), committed, 'the contract drifted: run `npm run openapi` and commit openapi.yaml')
})

t.test('openapi.yaml passes redocly lint', async (t) => {
  const { stdout, stderr } = await promisify(execFile)('node_modules/.bin/redocly', ['lint', 'openapi.yaml'], {
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }
  }).catch((err) => { t.fail(`redocly lint failed:\n${err.stdout}\n${err.stderr}`); return { stdout: '', stderr: '' } })
  t.match(stdout + stderr, /valid/)
  // Warnings pass lint but are problems all the same: an example that contradicts its schema is one.
  t.notMatch(stdout + stderr, /warning/i, 'without warnings')
})

t.test('the service serves the committed contract, as YAML and as JSON, to GET and HEAD', async (t) => {
  const app = await testApp(t)
  const committed = await readFile('openapi.yaml', 'utf8')
  const yaml = await app.inject({ url: '/docs/yaml' })
  t.equal(yaml.headers['content-type'], 'application/x-yaml')
  t.equal(yaml.body, committed)
  const json = await app.inject({ url: '/docs/json' })
  t.equal(json.headers['content-type'], 'application/json; charset=utf-8')
  t.same(json.json(), JSON.parse(JSON.stringify(app.swagger())), 'the document the YAML is made from')
  // Served again from the bytes made at the first request: the same, to the byte.
  t.equal((await app.inject({ url: '/docs/yaml' })).body, committed)
  t.equal((await app.inject({ url: '/docs/json' })).body, json.body)
  for (const [url, answer] of [['/docs/yaml', yaml], ['/docs/json', json]] as const) {
    const head = await app.inject({ method: 'HEAD', url })
    t.equal(head.statusCode, 200)
    t.equal(head.headers['content-length'], String(answer.rawPayload.length), `HEAD ${url} gives the length of GET's body`)
  }
})

t.test('the document states the contract: 3.1, version 1.0.0, MIT, bearer auth, named components', async (t) => {
  const app = await testApp(t)
  const doc = (await app.inject({ url: '/docs/json' })).json()
  t.equal(doc.openapi, '3.1.0')
  t.equal(doc.info.version, '1.0.0')
  t.equal(doc.info.license.name, 'MIT')
  t.same(Object.keys(doc.components.schemas).sort(),
    ['Change', 'ChangePage', 'CreatedSubscription', 'Delivery', 'Error', 'Health', 'NewPlant', 'NewSubscription', 'Plant',
      'PlantDeleted', 'PlantUpdate', 'PlantUpdated', 'StoredPlant', 'Subscription'])
  t.same(doc.components.schemas.StoredPlant.properties, doc.components.schemas.NewPlant.properties, 'StoredPlant is Plant plus the id')
  const { description, examples } = doc.components.schemas.NewPlant.properties.id
  t.same(doc.components.schemas.NewPlant.properties.id, { description, examples, type: 'integer', format: 'int64' })
  t.same(doc.components.schemas.NewPlant.required.sort(), ['id', 'name'])
  t.notOk('id' in doc.components.schemas.Plant.properties, 'Plant has no id')
  t.same(doc.components.schemas.Error.required.sort(), ['code', 'error', 'message'])

  const create = doc.paths['/plants'].post
  t.equal(create.requestBody.required, true)
  t.same(create.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/NewPlant' })
  t.same(create.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Plant' })
  for (const [status, response] of Object.entries<any>(create.responses)) {
    if (status === '200') continue
    t.same(response.content['application/json'].schema, { $ref: '#/components/schemas/Error' }, `${status} has the Error body`)
  }
  for (const status of ['400', '401', '408', '409', '413', '415', '429', '431', '500', '503']) t.ok(create.responses[status], `${status} declared`)

  const list = doc.paths['/plants'].get
  t.match(list.responses['200'].content['application/json'].schema, { type: 'array', items: { $ref: '#/components/schemas/StoredPlant' } })
  t.ok(list.responses['200'].headers.Link, 'the Link header is documented')
  t.same(list.parameters.map((p: { name: string }) => p.name), ['limit', 'after', 'tag'])
  const byId = doc.paths['/plants/{id}']
  t.same(byId.get.parameters[0].schema, { type: 'integer', format: 'int64' })
  t.notOk(byId.delete.responses['204'].content, '204 has no body')
  for (const op of [list, byId.get, byId.delete]) {
    for (const status of ['400', '401', '408', '429', '431', '500', '503']) t.ok(op.responses[status], `${op.operationId} declares ${status}`)
  }
  for (const op of [byId.get, byId.delete]) t.ok(op.responses['404'], `${op.operationId} declares 404`)
})

t.test('the document declares the upstream webhook and the subscription routes', async (t) => {
  const app = await testApp(t)
  const doc = (await app.inject({ url: '/docs/json' })).json()
  const announce = doc.webhooks['/plant/webhook'].post
  t.same(announce.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/NewPlant' }, 'the body is the upstream NewPlant')
  t.same(announce.parameters.map((p: { name: string, in: string, required: boolean }) => [p.name, p.in, p.required]),
    [['webhook-id', 'header', true], ['webhook-timestamp', 'header', true], ['webhook-signature', 'header', true]], 'the signature headers')
  t.ok(announce.responses['200'])

  t.same(Object.keys(doc.paths).filter((path) => path.startsWith('/webhooks')).sort(),
    ['/webhooks', '/webhooks/{id}', '/webhooks/{id}/deliveries', '/webhooks/{id}/deliveries/{deliveryId}/retry', '/webhooks/{id}/enable'])
  const subscribe = doc.paths['/webhooks'].post
  t.same(subscribe.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/NewSubscription' })
  t.same(subscribe.responses['201'].content['application/json'].schema, { $ref: '#/components/schemas/CreatedSubscription' })
  t.notOk('secret' in doc.components.schemas.Subscription.properties, 'a listed subscription has no secret')
  t.ok(doc.paths['/webhooks/{id}/deliveries'].get.responses['200'].headers.Link, 'the delivery log pages by Link')
  t.notOk(doc.paths['/webhooks/{id}/deliveries/{deliveryId}/retry'].post.responses['202'].content, '202 has no body')
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    if (!path.startsWith('/webhooks')) continue
    for (const op of Object.values<any>(item)) {
      for (const status of ['401', '429', '500', '503']) t.ok(op.responses[status], `${op.operationId} declares ${status}`)
    }
  }
})

t.test('NewSubscription.url states what the service checks by schema: format, scheme and length', async (t) => {
  // Every name resolves to a public address: what the schema takes, the address policy takes too.
  // No rate limit or overload check: every answer is the route's own.
  const env = { RATE_LIMIT_PER_TOKEN: '0', MAX_EVENT_LOOP_DELAY_MS: '0', MAX_HEAP_USED_PERCENT: '0' }
  const app = await testApp(t, env, { resolve: async () => [{ address: '93.184.216.34', family: 4 }] })
  const doc = (await app.inject({ url: '/docs/json' })).json()
  const { url } = doc.components.schemas.NewSubscription.properties
  t.match(url, { type: 'string', format: 'uri', pattern: HTTP_URL_PATTERN, maxLength: 2048 })
  const subscribe = async (value: string): Promise<LightMyRequestResponse> =>
    await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: value } })

  for (const [value, message] of [['not a url', 'must start with http:// or https:// and hold no user name or password'], ['https://exa mple.com/', 'must be an absolute URL']]) {
    const res = await subscribe(value)
    t.equal(assertError(t, res, 400, 'invalid_body'), `body/url ${message}`, `${value}: refused by the schema`)
    t.same(res.json().details, [{ field: 'body/url', message }])
  }

  // What a contract tester does: values the document's schema takes must pass validation, the others must not.
  const valid = schemaChecker(doc, () => true)('/components/schemas/NewSubscription')
  const value = fc.oneof(fc.webUrl(), fc.webUrl({ validSchemes: ['https'] }), fc.string(), fc.string().map((s) => `https://${s}`),
    fc.string().map((s) => `HTTP://${s}`), fc.webUrl().map((u) => `${u}/${'a'.repeat(2048 - u.length)}`))
  await fc.assert(fc.asyncProperty(value, async (value) => {
    const res = await subscribe(value)
    const taken = valid({ url: value })
    const refusedBySchema = res.statusCode === 400 && res.json().code === 'invalid_body'
    if (taken === refusedBySchema || (taken && ![201, 400].includes(res.statusCode))) {
      throw new Error(`${JSON.stringify(value)}: the document ${taken ? 'takes' : 'refuses'} it, the service answered ${res.statusCode} ${res.body}`)
    }
    if (res.statusCode === 201) await app.inject({ method: 'DELETE', url: `/webhooks/${String(res.json().id)}`, headers: AUTH })
  }), { numRuns: 300 })
})
