import Database from 'better-sqlite3'
import t from 'tap'
import { AUTH, assertError, testApp } from './helpers/app.ts'
import { heldResolver, idempotencySuite, KEYED_ENV, post } from './helpers/idempotency-suite.ts'
import { PUBLIC_V4 } from './helpers/webhooks-api.ts'

// The Idempotency-Key of POST /webhooks on SQLite, a real file; the same cases on PostgreSQL,
// with two instances: webhooks-idempotency-postgres.test.ts.

t.test('on SQLite', async (t) => {
  idempotencySuite(t, async (t) => {
    const path = `${t.testdir()}/plants.db`
    const held = heldResolver()
    const app = await testApp(t, { ...KEYED_ENV, DATABASE_URL: `sqlite:${path}` }, held.seams)
    // A second connection to the file, as an operator's sqlite3 would be: time moved by hand.
    const db = new Database(path)
    t.teardown(() => db.close())
    return {
      a: app,
      b: app,
      held,
      age: async (hours) => { db.prepare('UPDATE idempotency_keys SET created_at = created_at - @ms, leased_at = leased_at - @ms').run({ ms: Math.round(hours * 3_600_000) }) },
      keys: async () => db.prepare<[], { n: number }>('SELECT count(*) AS n FROM idempotency_keys').get()!.n
    }
  })
})

const body = { url: `https://${PUBLIC_V4}/hook` }

t.test('a key is a Structured Field string, or bare when it needs no quotes; anything else is a 400 and subscribes nothing', async (t) => {
  const app = await testApp(t, KEYED_ENV)
  const first = await post(app, '"a\\"quoted\\\\key"', body)
  t.equal(first.statusCode, 201, first.body)
  t.equal((await post(app, '"a\\"quoted\\\\key"; note=1', body)).body, first.body, 'the same string, with a parameter')
  const uuid = await post(app, '8e03978e-40d5-43e8-bc93-6894a57f9324', body)
  t.equal(uuid.statusCode, 201)
  t.equal((await post(app, '"8e03978e-40d5-43e8-bc93-6894a57f9324"', body)).body, uuid.body, 'bare and quoted name one key')
  for (const [key, why] of [
    ['"unterminated', 'is not a Structured Field string'],
    ['"é"', 'is not a Structured Field string'],
    ['two words', 'is not a Structured Field string'],
    ['"a", "b"', 'is not a Structured Field string'],
    ['?1', 'is not a Structured Field string'],
    ['""', 'is empty'],
    [`"${'k'.repeat(255)}"`, 'is longer than 256 characters']
  ]) {
    const message = assertError(t, await post(app, key, body), 400, 'idempotency_key_invalid')
    t.equal(message, `the Idempotency-Key ${why}; send a quoted one, such as Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"`, key.slice(0, 20))
  }
  t.equal((await post(app, `"${'k'.repeat(254)}"`, body)).statusCode, 201, '256 characters, quotes included, are taken')
  const listed = (await app.inject({ url: '/webhooks', headers: AUTH })).json()
  t.equal(listed.length, 3, 'the refused requests subscribed nothing')
})

t.test('a token keeps at most 1,000 keys; past them, 429 with the wait until its oldest expires, and a request without a key is served', async (t) => {
  const app = await testApp(t, KEYED_ENV)
  for (let i = 0; i < 1000; i++) {
    const res = await post(app, `key-${i}`, body)
    if (res.statusCode !== 201) t.fail(`key ${i}: ${res.statusCode} ${res.body}`)
    await app.inject({ method: 'DELETE', url: res.headers.location as string, headers: AUTH })
  }
  const exhausted = await post(app, 'key-1000', body)
  assertError(t, exhausted, 429, 'idempotency_keys_exhausted')
  const wait = Number(exhausted.headers['retry-after'])
  t.ok(wait > 23 * 3600 && wait <= 24 * 3600, `Retry-After ${wait} s: when the oldest key expires`)
  t.equal((await post(app, 'key-1000', body, 'other-token-0123456789')).statusCode, 201, "another token's keys are its own")
  t.equal((await post(app, undefined, body)).statusCode, 201, 'without a key')
  assertError(t, await post(app, 'key-7', body), 410, 'subscription_deleted')
})
