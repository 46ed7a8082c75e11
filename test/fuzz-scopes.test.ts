import { createHash } from 'node:crypto'
import fc from 'fast-check'
import type { HTTPMethods } from 'fastify'
import t from 'tap'
import { ALL_SCOPES } from '../schemas/scopes.ts'
import { testApp } from './helpers/app.ts'
import { fuzzSettings, propertyHolds } from './helpers/fuzz.ts'
import { GUARDED, testToken, writeTokens, type TestToken } from './helpers/tokens.ts'

// Property-based: no token, scope or header shape gets a request further than the
// scopes of the one token it presents. One app holds a token for every combination of
// scopes and two expired ones; generated requests present them, near misses of them
// (a character changed, added or dropped, another case or base64 alphabet, two joined),
// what else a client might know of them (their hash, their name) or nothing, under
// every scheme spelling and spacing, to every guarded route. FUZZ_SEED replays a run.

const { seed, numRuns } = fuzzSettings(1000)

const LIVE = Array.from({ length: 2 ** ALL_SCOPES.length - 1 }, (_, i) =>
  testToken(`combination-${i + 1}`, ALL_SCOPES.filter((_, bit) => ((i + 1) >> bit) & 1)))
const EXPIRED = [
  testToken('expired-long-ago', ALL_SCOPES, '2020-01-01T00:00:00Z'),
  testToken('expired-just-now', ['plants:read'], new Date(Date.now() - 1000).toISOString())
]
const TOKENS = [...LIVE, ...EXPIRED]

const token = fc.constantFrom(...TOKENS)
const token68Char = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=')

const credential = fc.oneof(
  { weight: 8, arbitrary: token.map((t) => t.value) },
  fc.tuple(token, fc.nat(), token68Char).map(([t, i, c]) => {
    const at = i % t.value.length
    return t.value.slice(0, at) + c + t.value.slice(at + 1)
  }),
  token.map((t) => t.value.slice(0, -1)),
  fc.tuple(token, token68Char).map(([t, c]) => t.value + c),
  fc.tuple(token68Char, token).map(([c, t]) => c + t.value),
  token.map((t) => t.value.toUpperCase()),
  token.map((t) => t.value.replaceAll('-', '+').replaceAll('_', '/')),
  token.map((t) => createHash('sha256').update(t.value).digest('hex')),
  token.map((t) => t.name),
  fc.tuple(token, fc.constantFrom(',', ', ', ' '), token).map(([a, separator, b]) => a.value + separator + b.value),
  fc.string({ unit: token68Char, maxLength: 60 })
)

const authorization = fc.tuple(
  fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR', 'Basic', 'Token', 'Bearer:', 'Bearer=', ''),
  fc.constantFrom(' ', '  ', '\t', '', ' \t'),
  credential,
  fc.constantFrom('', ' ', '  ', '\t')
).map((parts) => parts.join(''))

const request = fc.record({
  route: fc.constantFrom(...GUARDED),
  authorization: fc.option(authorization, { nil: undefined, freq: 8 }),
  // RFC 6750's query form, which this service never reads.
  query: fc.option(credential, { nil: undefined, freq: 4 })
})

/** The token a header presents, read leniently: "bearer" in any case, whitespace, the value, whitespace. */
function presented (header: string | undefined): TestToken | undefined {
  const match = /^bearer\s+(.*)$/is.exec(header ?? '')
  return match === null ? undefined : TOKENS.find((t) => t.value === match[1].trim())
}

t.test('no request gets further than the scopes of the token it presents', async (t) => {
  const file = writeTokens(`${t.testdir()}/tokens.json`, TOKENS)
  const app = await testApp(t, {
    API_TOKENS: '',
    API_TOKENS_FILE: file,
    METRICS_REQUIRE_TOKEN: 'true',
    // Off, so that every answer is the scope's: no rate, no lockout, no overload.
    RATE_LIMIT_PER_TOKEN: '0',
    AUTH_FAILURE_LIMIT: '1000000000',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    MAX_HEAP_USED_PERCENT: '0'
  })
  const property = fc.asyncProperty(request, async ({ route, authorization, query }) => {
    const res = await app.inject({
      method: route.method as HTTPMethods,
      url: route.url + (query === undefined ? '' : `?access_token=${encodeURIComponent(query)}`),
      headers: {
        ...(authorization === undefined ? {} : { authorization }),
        ...(route.payload === undefined ? {} : { 'content-type': 'application/json' })
      },
      ...(route.payload === undefined ? {} : { payload: JSON.stringify(route.payload) })
    })
    const status = res.statusCode
    const token = presented(authorization)
    const live = token !== undefined && LIVE.includes(token)
    const what = `${route.method} ${route.url} (${route.scope}) with ${JSON.stringify(authorization)}: ${status}`
    if (status >= 500 || status === 429) throw new Error(`${what}: not an answer about the token`)
    if (status === 403) {
      if (!live || token.scopes.includes(route.scope)) throw new Error(`${what}: 403 without a live token lacking the scope`)
      if (res.headers['www-authenticate'] !== `Bearer realm="plant-store", error="insufficient_scope", scope="${route.scope}"`) {
        throw new Error(`${what}: the challenge does not name the scope`)
      }
    } else if (status !== 401 && !(live && token.scopes.includes(route.scope))) {
      throw new Error(`${what}: let through without a live token granted ${route.scope}`)
    }
    if (live && token.scopes.includes(route.scope) && authorization === `Bearer ${token.value}` && (status === 401 || status === 403)) {
      throw new Error(`${what}: a live token with the scope was refused`)
    }
  })
  await propertyHolds(t, property, seed, numRuns)
})
