import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { AUTH, assertError, postPlant, testApp } from './helpers/app.ts'
import { startReceiver, type Receiver } from './helpers/receiver.ts'
import {
  PRIVATE, UNKNOWN_DELIVERY, UNKNOWN_ID, deliveries, logUntil, retry, subscribed, type Created, type Delivery
} from './helpers/webhooks-api.ts'

// The delivery log and the retry endpoint through app.inject. Deliveries go to a real receiver
// on 127.0.0.1, which needs WEBHOOK_ALLOW_PRIVATE=true.

const DELIVERY_ID = /^msg_[0-9a-f]{32}$/

// ---------------------------------------------------------------------------------
// 1. The delivery log

/** An app allowing private addresses, a receiver, and a subscription of it. */
async function delivering (t: Test, env: Record<string, string> = {}, answer?: Parameters<typeof startReceiver>[1]): Promise<{
  app: FastifyInstance
  receiver: Receiver
  subscription: Created
}> {
  const app = await testApp(t, { ...PRIVATE, ...env })
  const receiver = await startReceiver(t, answer)
  const subscription = await subscribed(t, app, receiver.url)
  return { app, receiver, subscription }
}

async function createPlant (t: Test, app: FastifyInstance, id: number): Promise<void> {
  const res = await postPlant(app, { id, name: `plant ${id}` })
  t.equal(res.statusCode, 200, `plant ${id} created`)
}

const delivered = (count: number) => (log: Delivery[]): boolean => log.length === count && log.every((d) => d.status === 'delivered')

t.test('the delivery log lists every delivery, newest first, a page at a time', async (t) => {
  const { app, receiver, subscription } = await delivering(t)
  const { id } = subscription
  const PLANTS = 25
  for (let plant = 1; plant <= PLANTS; plant++) await createPlant(t, app, plant)
  await receiver.waitFor(PLANTS)
  await logUntil(app, id, delivered(PLANTS))
  // A repeated create (a safe retry) announces nothing: only a new plant is delivered.
  await createPlant(t, app, PLANTS)
  t.equal((await deliveries(app, id)).length, PLANTS, 'a repeated create writes no delivery')

  const pages: Delivery[][] = []
  const links: string[] = []
  let next: string | undefined = `/webhooks/${id}/deliveries?limit=10`
  while (next !== undefined && pages.length < 10) {
    const res = await app.inject({ url: next, headers: AUTH })
    t.equal(res.statusCode, 200, next)
    pages.push(res.json())
    const link = res.headers.link
    next = undefined
    if (typeof link === 'string') {
      links.push(link)
      const match = /^<(\/webhooks\/(wh_[0-9a-f]{32})\/deliveries\?limit=10&before=(\d+))>; rel="next"$/.exec(link)
      t.ok(match, `a next link: ${link}`)
      t.equal(match?.[2], id, 'to the same subscription')
      next = match?.[1]
    }
  }
  t.strictSame(pages.map((page) => page.length), [10, 10, 5], 'pages of 10, the last one short')
  t.equal(links.length, 2, 'a Link on every page but the last')
  const log = pages.flat()
  t.equal(new Set(log.map((d) => d.id)).size, PLANTS, 'distinct deliveries')
  t.strictSame(log.map((d) => d.plantId), Array.from({ length: PLANTS }, (_, i) => PLANTS - i), 'newest first')
  for (const d of log) {
    t.strictSame(Object.keys(d).sort(), ['attempts', 'createdAt', 'deliveredAt', 'event', 'id', 'lastStatusCode', 'plantId', 'status'],
      `delivery of plant ${d.plantId}: its fields`)
    t.match(d.id, DELIVERY_ID)
    t.equal(d.event, 'plant.created')
    t.equal(d.status, 'delivered')
    t.equal(d.attempts, 1)
    t.equal(d.lastStatusCode, 200)
    t.ok(Date.parse(d.deliveredAt ?? '') >= Date.parse(d.createdAt), 'delivered after it was created')
  }
  for (let i = 1; i < log.length; i++) t.ok(log[i - 1].createdAt >= log[i].createdAt, 'createdAt never increases down the log')
  // Time-ordered ids (new ones land at the end of the store's index): the first 12 hex
  // digits are the delivery's creation time in milliseconds.
  t.same(log.filter((d) => parseInt(d.id.slice(4, 16), 16) !== Date.parse(d.createdAt)), [], 'each id begins with its creation time')

  // What the receiver saw: one request per delivery, under the delivery's id, with its plant, signed.
  const seen = receiver.received.map((r) => r.headers['webhook-id'])
  t.strictSame([...seen].sort(), log.map((d) => d.id).sort(), 'every delivery id is a webhook-id the receiver saw, once')
  const plantOf = new Map(log.map((d) => [d.id, d.plantId]))
  for (const request of receiver.received) {
    const deliveryId = String(request.headers['webhook-id'])
    t.equal(JSON.parse(request.body).id, plantOf.get(deliveryId), `${deliveryId} carried its plant`)
    t.doesNotThrow(() => receiver.verify(subscription.secret, request), 'signed with the subscription\'s secret')
  }

  const byDefault = await app.inject({ url: `/webhooks/${id}/deliveries`, headers: AUTH })
  t.equal(byDefault.json().length, 20, 'a page is 20 by default')
  t.match(byDefault.headers.link, new RegExp(`^</webhooks/${id}/deliveries\\?limit=20&before=\\d+>; rel="next"$`))
  const all = await app.inject({ url: `/webhooks/${id}/deliveries?limit=100`, headers: AUTH })
  t.equal(all.json().length, PLANTS)
  t.notOk(all.headers.link, 'no Link when nothing more remains')
  const exact = await app.inject({ url: `/webhooks/${id}/deliveries?limit=${PLANTS}`, headers: AUTH })
  t.equal(exact.json().length, PLANTS)
  t.notOk(exact.headers.link, 'no Link when the page ends exactly at the last delivery')
  const oldest = await app.inject({ url: `/webhooks/${id}/deliveries?before=1`, headers: AUTH })
  t.strictSame(oldest.json(), [], 'nothing before the first cursor')
  t.notOk(oldest.headers.link)

  for (const [query, message] of [
    ['limit=0', /^querystring\/limit must be at least 1$/],
    ['limit=101', /^querystring\/limit must be at most 100$/],
    ['limit=-1', /^querystring\/limit /],
    ['limit=abc', /^querystring\/limit must be an integer$/],
    ['limit=1.5', /^querystring\/limit must be an integer$/],
    ['limit=1&limit=2', /^querystring\/limit /],
    ['before=0', /^querystring\/before must be at least 1$/],
    ['before=-5', /^querystring\/before /],
    ['before=abc', /^querystring\/before must be an integer$/],
    ['before=2.5', /^querystring\/before must be an integer$/],
    ['before=9007199254740992', /^querystring\/before must be at most 9007199254740991$/],
    ['before=99999999999999999999', /^querystring\/before /]
  ] as const) {
    t.match(assertError(t, await app.inject({ url: `/webhooks/${id}/deliveries?${query}`, headers: AUTH }), 400, query), message, query)
  }
  t.match(assertError(t, await app.inject({ url: `/webhooks/${UNKNOWN_ID}/deliveries`, headers: AUTH }), 404, 'unknown subscription'),
    `no webhook subscription has id ${UNKNOWN_ID}`)
})

t.test('each subscription has its own log, and deleting one drops it', async (t) => {
  const { app, receiver, subscription } = await delivering(t)
  for (let plant = 1; plant <= 3; plant++) await createPlant(t, app, plant)
  const second = await subscribed(t, app, receiver.url)
  await createPlant(t, app, 4)
  await receiver.waitFor(5)
  const first = await logUntil(app, subscription.id, delivered(4))
  const other = await logUntil(app, second.id, delivered(1))
  t.strictSame(first.map((d) => d.plantId), [4, 3, 2, 1])
  t.strictSame(other.map((d) => d.plantId), [4], 'a subscription gets the plants created after it, only')
  t.not(other[0].id, first[0].id, 'one delivery per subscription, each with its own id')
  t.equal((await app.inject({ method: 'DELETE', url: `/webhooks/${subscription.id}`, headers: AUTH })).statusCode, 204)
  assertError(t, await app.inject({ url: `/webhooks/${subscription.id}/deliveries`, headers: AUTH }), 404, 'the deleted one has no log')
  t.strictSame((await deliveries(app, second.id)).map((d) => d.id), [other[0].id], 'the other log is untouched')
})

// ---------------------------------------------------------------------------------
// 2. Retry

t.test('retrying a delivered delivery sends it again under the same webhook-id', async (t) => {
  const { app, receiver, subscription } = await delivering(t)
  const { id } = subscription
  await createPlant(t, app, 7)
  await createPlant(t, app, 8)
  await receiver.waitFor(2)
  const log = await logUntil(app, id, delivered(2))
  const target = log.find((d) => d.plantId === 7)!
  const first = receiver.received.find((r) => r.headers['webhook-id'] === target.id)!
  t.ok(first, 'the receiver got the delivery once')

  const res = await retry(app, id, target.id)
  t.equal(res.statusCode, 202)
  t.equal(res.body, '', 'no body: the delivery log says where it stands')
  const [, , again] = await receiver.waitFor(3)
  t.equal(again.headers['webhook-id'], target.id, 'the same webhook-id')
  t.equal(again.body, first.body, 'the same body')
  t.doesNotThrow(() => receiver.verify(subscription.secret, again), 'signed again')
  const after = await logUntil(app, id, (l) => delivered(2)(l) && l.find((d) => d.id === target.id)?.deliveredAt !== target.deliveredAt)
  t.strictSame(after.map((d) => d.id), log.map((d) => d.id), 'still the same deliveries, in the same order')
  const restarted = after.find((d) => d.id === target.id)!
  t.equal(restarted.status, 'delivered')
  t.equal(restarted.attempts, 1, 'started over: its attempts counted from zero')
  t.equal(restarted.createdAt, target.createdAt, 'its createdAt is the plant\'s, unchanged')
  t.strictSame(after.find((d) => d.id !== target.id), log.find((d) => d.id !== target.id), 'the other delivery is untouched')

  t.match(assertError(t, await retry(app, id, UNKNOWN_DELIVERY), 404, 'unknown delivery'),
    `subscription ${id} has no delivery with id ${UNKNOWN_DELIVERY}`)
  t.match(assertError(t, await retry(app, id, 'msg_nope'), 400, 'malformed delivery id'), /^params\/deliveryId /)
  t.match(assertError(t, await retry(app, UNKNOWN_ID, target.id), 404, 'unknown subscription'), `no webhook subscription has id ${UNKNOWN_ID}`)

  // A delivery is retried through its own subscription only.
  const other = await subscribed(t, app, receiver.url)
  assertError(t, await retry(app, other.id, target.id), 404, 'another subscription\'s delivery')
  t.equal(receiver.received.length, 3, 'nothing else was sent')
})

t.test('retrying a failed delivery starts it over', async (t) => {
  const { app, receiver, subscription } = await delivering(t, { WEBHOOK_MAX_ATTEMPTS: '1' }, () => 500)
  const { id } = subscription
  await createPlant(t, app, 1)
  await receiver.waitFor(1)
  const [failed] = await logUntil(app, id, (l) => l.length === 1 && l[0].status === 'failed')
  t.equal(failed.status, 'failed')
  t.equal(failed.attempts, 1)
  t.equal(failed.lastStatusCode, 500)
  t.notOk('deliveredAt' in failed)
  t.notOk('nextAttemptAt' in failed, 'a failed delivery is due never')

  receiver.answer(() => 200)
  t.equal((await retry(app, id, failed.id)).statusCode, 202)
  const [, again] = await receiver.waitFor(2)
  t.equal(again.headers['webhook-id'], failed.id)
  const [now] = await logUntil(app, id, delivered(1))
  t.equal(now.id, failed.id)
  t.equal(now.attempts, 1, 'one attempt since the retry')
  t.equal(now.lastStatusCode, 200)
  t.notOk('lastError' in now, 'the old failure is cleared')
})

t.test('retrying a pending delivery answers 409', async (t) => {
  const { app, receiver, subscription } = await delivering(t, { WEBHOOK_RETRY_BASE_MS: '600000' }, () => 500)
  const { id } = subscription
  await createPlant(t, app, 1)
  await receiver.waitFor(1)
  const [pending] = await logUntil(app, id, (l) => l.length === 1 && l[0].attempts >= 1)
  t.equal(pending.status, 'pending')
  t.equal(pending.lastStatusCode, 500)
  t.ok(pending.nextAttemptAt, 'a pending delivery has its next attempt due')
  t.equal(assertError(t, await retry(app, id, pending.id), 409, 'pending'),
    `delivery ${pending.id} is pending already: its next attempt is in the delivery log`)
  const [still] = await deliveries(app, id)
  t.equal(still.id, pending.id)
  t.equal(still.status, 'pending', 'the 409 changed nothing')
  t.ok(still.attempts >= 1, 'its attempts were not reset')
})
