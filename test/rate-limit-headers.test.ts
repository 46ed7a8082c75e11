import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { AUTH, assertError, postPlant, testApp } from './helpers/app.ts'

const RATE_LIMIT_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']

const budget = (res: LightMyRequestResponse) => RATE_LIMIT_HEADERS.map((name) => res.headers[name])

t.test('every answer to a known token says its budget, counting down within the second', async (t) => {
  const app = await testApp(t, { RATE_LIMIT_PER_TOKEN: '4' })
  const answers = [
    await postPlant(app, { id: 1, name: 'Basil' }),
    await app.inject({ url: '/plants/1', headers: AUTH }),
    await app.inject({ url: '/plants/2', headers: AUTH }),
    await app.inject({ url: '/webhooks', headers: AUTH })
  ]
  t.same(answers.map((res) => res.statusCode), [200, 200, 404, 200])
  t.same(answers.map(budget), [['4', '3', '1'], ['4', '2', '1'], ['4', '1', '1'], ['4', '0', '1']],
    'limit, remaining, seconds to the reset: on successes and errors, plant and webhook routes alike')

  const limited = await app.inject({ url: '/plants', headers: AUTH })
  t.match(assertError(t, limited, 429), /more than 4 requests a second with this token/)
  t.same(budget(limited), ['4', '0', '1'])
  t.equal(limited.headers['retry-after'], '1')
})

t.test('answers before the token is known carry no budget', async (t) => {
  const app = await testApp(t, { RATE_LIMIT_PER_TOKEN: '4', AUTH_FAILURE_LIMIT: '1' })
  const refused = [
    await app.inject({ url: '/plants', remoteAddress: '192.0.2.1' }),
    await app.inject({ url: '/plants', remoteAddress: '192.0.2.1', headers: { authorization: 'Bearer wrong-token-0123456789' } }),
    await app.inject({ url: '/plants', remoteAddress: '192.0.2.1', headers: { authorization: 'Bearer wrong-token-0123456789' } })
  ]
  t.same(refused.map((res) => res.statusCode), [401, 401, 429], 'no token, a wrong one, a wrong one from a locked-out address')
  for (const res of refused) t.same(budget(res), [undefined, undefined, undefined], `${res.statusCode}: no RateLimit headers`)
  t.ok(refused[2].headers['retry-after'], 'the lockout says when to retry')
  t.equal((await app.inject({ url: '/plants', headers: AUTH })).headers['ratelimit-remaining'], '3', 'and they use none of it')
})

t.test('RATE_LIMIT_PER_TOKEN=0: no limit, no headers, none declared', async (t) => {
  const app = await testApp(t, { RATE_LIMIT_PER_TOKEN: '0' })
  const res = await app.inject({ url: '/plants', headers: AUTH })
  t.equal(res.statusCode, 200)
  t.same(budget(res), [undefined, undefined, undefined])
  const doc = (await app.inject({ url: '/docs/json' })).json()
  t.notOk(JSON.stringify(doc).includes('RateLimit-'), 'the document promises no RateLimit header')
})

t.test('every guarded operation declares the headers on its successes, required there, and on its 429', async (t) => {
  const app = await testApp(t)
  const doc = (await app.inject({ url: '/docs/json' })).json()
  let operations = 0
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const guarded = op.security?.[0]?.bearerAuth?.length > 0
      for (const [status, response] of Object.entries<any>(op.responses)) {
        const declared = Object.entries<any>(response.headers ?? {}).filter(([name]) => name.startsWith('RateLimit-'))
        const what = `${method.toUpperCase()} ${path} ${status}`
        const expected = guarded && (/^2\d\d$/.test(status) || status === '304' || status === '429')
          ? ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']
          : []
        t.same(declared.map(([name]) => name), expected, what)
        // Every success carries them; of the 429s, only rate_limited (auth_locked_out answers a token not known).
        for (const [name, header] of declared) t.equal(header.required === true, status !== '429', `${what}: ${name} required on successes only`)
      }
      if (guarded) operations++
    }
  }
  t.equal(operations, 14, 'the plant, change feed, webhook and metrics operations')
})
