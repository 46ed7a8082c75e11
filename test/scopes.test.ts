import Fastify, { type FastifyInstance, type HTTPMethods } from 'fastify'
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { ALL_SCOPES, SCOPES, type Scope } from '../schemas/scopes.ts'
import { loadConfig } from '../src/config.ts'
import auth from '../src/plugins/auth.ts'
import overload from '../src/plugins/overload.ts'
import tokens from '../src/plugins/tokens.ts'
import { assertError, postPlant, testApp, TOKEN } from './helpers/app.ts'
import { GUARDED, testToken, writeTokens, type TestToken } from './helpers/tokens.ts'

// One token per scope, each granted that scope alone.
const BY_SCOPE = Object.fromEntries(ALL_SCOPES.map((scope) => [scope, testToken(scope.replace(':', '-'), [scope])])) as Record<Scope, TestToken>

async function scopedApp (t: Test, env: NodeJS.ProcessEnv = {}): Promise<FastifyInstance> {
  const file = writeTokens(`${t.testdir()}/tokens.json`, Object.values(BY_SCOPE))
  return await testApp(t, { API_TOKENS: '', API_TOKENS_FILE: file, METRICS_REQUIRE_TOKEN: 'true', RATE_LIMIT_PER_TOKEN: '0', ...env })
}

async function call (app: FastifyInstance, route: typeof GUARDED[number], token: TestToken) {
  return await app.inject({
    method: route.method as HTTPMethods,
    url: route.url,
    headers: { authorization: `Bearer ${token.value}`, ...(route.payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(route.payload === undefined ? {} : { payload: JSON.stringify(route.payload) })
  })
}

t.test('each scope allows exactly its operations: every other guarded route and method answers 403', async (t) => {
  const app = await scopedApp(t)
  for (const route of GUARDED) {
    for (const [scope, token] of Object.entries(BY_SCOPE)) {
      const res = await call(app, route, token)
      const what = `${route.method} ${route.url} with a ${scope} token`
      if (scope === route.scope) {
        t.ok(res.statusCode !== 401 && res.statusCode !== 403 && res.statusCode < 500, `${what}: let through (${res.statusCode})`)
        continue
      }
      t.equal(res.statusCode, 403, what)
      t.equal(res.headers['www-authenticate'], `Bearer realm="plant-store", error="insufficient_scope", scope="${route.scope}"`, what)
      if (route.method !== 'HEAD') t.match(assertError(t, res, 403), route.scope, `${what}: the message names the scope needed`)
    }
  }
})

t.test('the table covers every guarded operation of the document, whose security requirement names the same scope', async (t) => {
  const app = await scopedApp(t)
  const doc = (await app.inject({ url: '/docs/json' })).json()
  const documented: string[] = []
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (op.security?.length === 0) continue
      documented.push(`${method.toUpperCase()} ${path}`)
      const route = GUARDED.find((r) => r.method === method.toUpperCase() && r.path === path)
      t.same(op.security, [{ bearerAuth: [route?.scope] }], `${method} ${path} names its scope`)
      t.ok(op.responses['401'] && op.responses['403'], `${method} ${path} declares 401 and 403`)
    }
  }
  t.same(documented.sort(), GUARDED.filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${r.path}`).sort())
  t.match(doc.components.securitySchemes.bearerAuth.description, /insufficient_scope/)
  for (const scope of ALL_SCOPES) t.match(doc.components.securitySchemes.bearerAuth.description, scope, `the scheme describes ${scope}`)
})

t.test('each plants scope, in the document and in docs/tokens.md, names every operation it opens', async (t) => {
  const app = await scopedApp(t)
  const described = (await app.inject({ url: '/docs/json' })).json().components.securitySchemes.bearerAuth.description
  const tokensDoc = readFileSync(new URL('../docs/tokens.md', import.meta.url), 'utf8')
  for (const route of GUARDED.filter((r) => r.scope.startsWith('plants:') && r.method !== 'HEAD')) {
    const operation = `${route.method} ${route.path}`
    t.match(SCOPES[route.scope], operation, `schemas/scopes.ts: ${route.scope} names ${operation}`)
    t.ok(described.includes(`\`${route.scope}\`, ${SCOPES[route.scope]}`), 'the document says the same')
    t.ok(tokensDoc.split('\n').some((line) => line.startsWith(`| \`${route.scope}\``) && line.includes(`\`${operation}\``)), `docs/tokens.md: ${route.scope} names ${operation}`)
  }
})

t.test('a token with several scopes may do what each allows, and nothing else', async (t) => {
  const both = testToken('plants', ['plants:read', 'plants:write'])
  const app = await testApp(t, { API_TOKENS: '', API_TOKENS_FILE: writeTokens(`${t.testdir()}/tokens.json`, [both]) })
  for (const route of GUARDED.filter((r) => r.scope !== 'metrics:read')) {
    const status = (await call(app, route, both)).statusCode
    if (route.scope.startsWith('plants:')) t.not(status, 403, `${route.method} ${route.url}`)
    else t.equal(status, 403, `${route.method} ${route.url}`)
  }
})

t.test('the scope is decided before the body is read or validated', async (t) => {
  const app = await scopedApp(t, { BODY_LIMIT: '100' })
  const reader = { authorization: `Bearer ${BY_SCOPE['plants:read'].value}` }
  for (const [payload, type] of [['{not json', 'application/json'], ['text', 'text/plain'], [JSON.stringify({ id: 1, name: 'x'.repeat(200) }), 'application/json']]) {
    assertError(t, await postPlant(app, payload, { ...reader, 'content-type': type }), 403, `${type}, ${payload.length} bytes`)
  }
})

t.test('a refused scope is no rejected token: it does not count towards the lockout of its address', async (t) => {
  const app = await scopedApp(t, { AUTH_FAILURE_LIMIT: '1' })
  const reader = { authorization: `Bearer ${BY_SCOPE['plants:read'].value}` }
  for (let i = 0; i < 3; i++) assertError(t, await postPlant(app, { id: i, name: 'a' }, reader), 403)
  t.equal((await app.inject({ url: '/plants', headers: reader })).statusCode, 200)
})

t.test('a route behind the token without a scope stops the start, naming the route', async (t) => {
  const configs: Array<{ scope?: Scope }> = [{}, { scope: 'plants:everything' as Scope }]
  for (const config of configs) {
    const app = Fastify()
    app.decorate('config', loadConfig({ API_TOKENS: TOKEN, DATABASE_URL: 'memory:', RATE_LIMIT_PER_TOKEN: '0' }))
    await app.register(tokens)
    await app.register(overload)
    await app.register(auth)
    await t.rejects(async () => {
      app.get('/unscoped', { config }, async () => 'open')
      await app.ready()
    }, /GET \/unscoped is behind the bearer token but declares no scope/, JSON.stringify(config))
    await app.close().catch(() => {})
  }
})
