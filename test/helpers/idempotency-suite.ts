import type { LookupAddress } from 'node:dns'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import type { Seams } from '../../src/app.ts'
import { AUTH, assertError, TOKEN } from './app.ts'
import { ENV, PUBLIC_V4 } from './webhooks-api.ts'
import { retryUntil } from './wait.ts'

// The Idempotency-Key of POST /webhooks, the same cases on each store (test/webhooks-idempotency*.test.ts):
// `a` and `b` are two apps on one store (on PostgreSQL, two instances; on SQLite, one app twice).

export const OTHER_TOKEN = 'other-token-0123456789'
export const KEYED_ENV = { ...ENV, API_TOKENS: `${TOKEN},${OTHER_TOKEN}` }
// A receiver's name resolves to a public address once the test lets it: a subscribe to it runs until then.
export const HELD_HOST = 'held.example'

/** Name resolution for the apps: HELD_HOST answers once `release` is called; `entered(n)` once it was asked `n` times. */
export function heldResolver (): { seams: Seams, entered: (count?: number) => Promise<void>, release: () => void } {
  let asked = 0
  let release = (): void => {}
  const released = new Promise<void>((resolve) => { release = resolve })
  const resolve = async (host: string): Promise<LookupAddress[]> => {
    if (host === HELD_HOST) {
      asked++
      await released
    }
    return [{ address: PUBLIC_V4, family: 4 }]
  }
  const entered = async (count = 1): Promise<void> => { await retryUntil(async () => asked, (n) => n >= count, 10_000, 5) }
  return { seams: { resolve }, entered, release }
}

export interface KeyedApps {
  a: FastifyInstance
  b: FastifyInstance
  /** HELD_HOST's resolution, on both apps. */
  held: ReturnType<typeof heldResolver>
  /** Moves every key's creation and lease back by `hours`, as if that long had passed. */
  age: (hours: number) => Promise<void>
  /** How many keys the store keeps. */
  keys: () => Promise<number>
}

/** POST /webhooks with a key (quoted as the draft has it, unless it starts with a quote or `bare`), as `token`. */
export async function post (app: FastifyInstance, key: string | undefined, body: object, token = TOKEN): Promise<LightMyRequestResponse> {
  return await app.inject({
    method: 'POST',
    url: '/webhooks',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...key === undefined ? {} : { 'idempotency-key': key } },
    payload: JSON.stringify(body)
  })
}

const quoted = (key: string): string => `"${key}"`
const urlOf = (name: string): string => `https://${PUBLIC_V4}/${name}`

async function subscriptions (app: FastifyInstance): Promise<Array<{ id: string, url: string }>> {
  return (await app.inject({ url: '/webhooks', headers: AUTH })).json()
}

async function unsubscribeAll (app: FastifyInstance): Promise<void> {
  for (const { id } of await subscriptions(app)) await app.inject({ method: 'DELETE', url: `/webhooks/${id}`, headers: AUTH })
}

/** The cases, each on a store with no subscription; `apps` makes the two apps of a case. */
export function idempotencySuite (t: Test, apps: (t: Test) => Promise<KeyedApps>): void {
  t.test('the same key and body again: the first answer, secret and all, from either app, and one subscription', async (t) => {
    const { a, b } = await apps(t)
    const body = { url: urlOf('twice'), events: ['plant.created', 'plant.deleted'] }
    const first = await post(a, quoted('twice-8e03978e'), body)
    t.equal(first.statusCode, 201, first.body)
    for (const [app, key, same] of [[b, quoted('twice-8e03978e'), body], [a, 'twice-8e03978e', body],
      [b, quoted('twice-8e03978e'), { events: ['plant.deleted', 'plant.created'], url: urlOf('twice') }]] as const) {
      const again = await post(app, key, same)
      t.equal(again.statusCode, 201, `${key}: ${JSON.stringify(same)}`)
      t.equal(again.body, first.body, 'the same answer, byte for byte: the same subscription and secret')
      t.equal(again.headers.location, first.headers.location)
    }
    t.same((await subscriptions(b)).map(({ id }) => id), [first.json().id], 'one subscription')
  })

  t.test('sent at once from both apps: exactly one subscription; each answer is the first one or a 409', async (t) => {
    const { a, b } = await apps(t)
    const body = { url: urlOf('parallel') }
    const answers = await Promise.all(Array.from({ length: 8 }, async (_, i) => await post(i % 2 === 0 ? a : b, quoted('parallel-1'), body)))
    const created = answers.filter((res) => res.statusCode === 201)
    t.ok(created.length >= 1)
    t.same(new Set(created.map((res) => res.body)).size, 1, 'every 201 is the same answer')
    for (const res of answers.filter((res) => res.statusCode !== 201)) {
      assertError(t, res, 409, 'idempotency_key_in_use')
      t.equal(res.headers['retry-after'], '1')
    }
    t.same((await subscriptions(a)).map(({ id }) => id), [created[0].json().id], 'one subscription')
    t.equal((await post(b, quoted('parallel-1'), body)).body, created[0].body, 'and a retry gets its answer')
  })

  t.test('while the first request runs, its key answers 409 on either app, and 422 for another body; then the first answer', async (t) => {
    const { a, b, held } = await apps(t)
    const body = { url: `https://${HELD_HOST}/hook` }
    const first = post(a, quoted('running'), body)
    await held.entered()
    for (const app of [a, b]) {
      const running = await post(app, quoted('running'), body)
      assertError(t, running, 409, 'idempotency_key_in_use')
      t.equal(running.headers['retry-after'], '1')
      assertError(t, await post(app, quoted('running'), { url: urlOf('another') }), 422, 'idempotency_key_reused')
    }
    held.release()
    const answered = await first
    t.equal(answered.statusCode, 201, answered.body)
    t.equal((await post(b, quoted('running'), body)).body, answered.body)
    assertError(t, await post(b, quoted('running'), { url: `https://${HELD_HOST}/hook`, events: ['plant.updated'] }), 422, 'idempotency_key_reused')
    t.equal((await subscriptions(b)).length, 1)
  })

  t.test('a request cut short holds its key for the lease only: a retry then takes it over, and the first, back late, subscribes nothing', async (t) => {
    const { a, b, held, age } = await apps(t)
    const body = { url: `https://${HELD_HOST}/late` }
    const first = post(a, quoted('late'), body)
    await held.entered()
    assertError(t, await post(b, quoted('late'), body), 409, 'idempotency_key_in_use')
    await age(61 / 3600)
    const retry = post(b, quoted('late'), body)
    await held.entered(2) // the retry holds the key now
    held.release()
    const [late, retried] = await Promise.all([first, retry])
    assertError(t, late, 409, 'idempotency_key_in_use')
    t.equal(retried.statusCode, 201, retried.body)
    t.same((await subscriptions(a)).map(({ id }) => id), [retried.json().id], 'one subscription, the retry\'s')
    t.equal((await post(a, quoted('late'), body)).body, retried.body)
  })

  t.test('a request that fails releases its key: the retry runs again', async (t) => {
    const { a, b } = await apps(t)
    for (let i = 0; i < 20; i++) t.equal((await post(a, undefined, { url: urlOf(`full-${i}`) })).statusCode, 201)
    assertError(t, await post(a, quoted('after-full'), { url: urlOf('one-more') }), 409, 'subscription_limit')
    const [oldest] = await subscriptions(a)
    t.equal((await a.inject({ method: 'DELETE', url: `/webhooks/${oldest.id}`, headers: AUTH })).statusCode, 204)
    const retried = await post(b, quoted('after-full'), { url: urlOf('one-more') })
    t.equal(retried.statusCode, 201, retried.body)
    t.equal((await subscriptions(a)).filter(({ url }) => url === urlOf('one-more')).length, 1)
    await unsubscribeAll(a)
  })

  t.test("keys are the token's: another token's same key is another key", async (t) => {
    const { a, b } = await apps(t)
    const body = { url: urlOf('tokens') }
    const mine = await post(a, quoted('shared-name'), body)
    const theirs = await post(b, quoted('shared-name'), body, OTHER_TOKEN)
    t.equal(mine.statusCode, 201)
    t.equal(theirs.statusCode, 201)
    t.not(theirs.json().id, mine.json().id, 'two subscriptions')
    assertError(t, await post(b, quoted('shared-name'), { url: urlOf('tokens-2') }, OTHER_TOKEN), 422, 'idempotency_key_reused')
    t.equal((await post(a, quoted('shared-name'), body)).body, mine.body)
  })

  t.test('the key of a subscription deleted since answers 410: its secret is no longer kept', async (t) => {
    const { a, b } = await apps(t)
    const first = await post(a, quoted('deleted'), { url: urlOf('deleted') })
    t.equal((await b.inject({ method: 'DELETE', url: `/webhooks/${first.json().id}`, headers: AUTH })).statusCode, 204)
    const message = assertError(t, await post(b, quoted('deleted'), { url: urlOf('deleted') }), 410, 'subscription_deleted')
    t.match(message, first.json().id)
  })

  t.test('after 24 hours a key is free again, and the cleanup deletes the keys that old', async (t) => {
    const { a, b, age, keys } = await apps(t)
    const first = await post(a, quoted('expiring'), { url: urlOf('expiring-1') })
    t.equal((await post(a, quoted('unused'), { url: urlOf('unused') })).statusCode, 201)
    t.equal(await keys(), 2)
    await age(23)
    assertError(t, await post(b, quoted('expiring'), { url: urlOf('expiring-2') }), 422, 'idempotency_key_reused')
    await age(2)
    const later = await post(b, quoted('expiring'), { url: urlOf('expiring-2') })
    t.equal(later.statusCode, 201, 'another body, once the key expired: a new request')
    t.not(later.json().id, first.json().id)
    // A subscription changed wakes the cleanup: the other expired key goes.
    t.equal((await retryUntil(keys, (count) => count === 1, 10_000)).value, 1, 'only the key used again is kept')
  })
}
