import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { AUTH, postPlant, testApp } from '../helpers/app.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { retryUntil } from '../helpers/wait.ts'
import { PRIVATE, deliveries, logUntil, metric, settled, subscribe } from '../helpers/webhook-app.ts'

// What is delivered, to whom and how often, end to end: a plant created through app.inject is POSTed to real
// receivers on 127.0.0.1, and the delivery log and /metrics say what came of it, retries and pauses included.

// Retries come quickly, so that a test sees several attempts.
const FAST = { WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_TIMEOUT_MS: '300' }

t.test('the body is the exact NewPlant, signed with the subscription\'s secret', async (t) => {
  const app = await testApp(t, PRIVATE)
  const receiverA = await startReceiver(t)
  const receiverB = await startReceiver(t)
  const a = await subscribe(t, app, receiverA.url)
  const b = await subscribe(t, app, receiverB.url)
  // What is POSTed to /plants, and the exact body each subscriber must receive: ids beyond
  // 2^53 and at both ends of int64 written exactly, no tag key when there is no tag, the
  // fields in the NewPlant order, unknown fields dropped, strings escaped as JSON needs.
  const cases: Array<[string, string]> = [
    ['{"id":1,"name":"Fern"}', '{"id":1,"name":"Fern"}'],
    ['{"id":2,"name":"nul\\u0000 del\u007f","tag":"\\u2028"}', '{"id":2,"name":"nul\\u0000 del\u007f","tag":"\u2028"}'],
    ['{"tag":"日陰","name":"Monstera «Thai» 🌿","id":9007199254740993}', '{"id":9007199254740993,"name":"Monstera «Thai» 🌿","tag":"日陰"}'],
    ['{"id":9223372036854775807,"name":"Caf\\u00e9 \\"noir\\" \\\\ \\n","extra":[1,2]}', '{"id":9223372036854775807,"name":"Café \\"noir\\" \\\\ \\n"}'],
    ['{"id":-9223372036854775808,"name":"Ñandú","tag":"ß"}', '{"id":-9223372036854775808,"name":"Ñandú","tag":"ß"}']
  ]
  for (const [request] of cases) t.equal((await postPlant(app, request)).statusCode, 200, request)
  const expected = cases.map(([, body]) => body).sort()

  for (const [receiver, own, other] of [[receiverA, a, b], [receiverB, b, a]] as const) {
    const received = await receiver.waitFor(cases.length)
    const log = await logUntil(app, own.id, (log) => settled(log, cases.length))
    t.equal(received.length, cases.length, 'one request per plant')
    t.same(received.map((r) => r.body).sort(), expected, 'the raw bodies, exactly')
    t.same(log.map((d) => d.plantId).sort(), ['-9223372036854775808', '1', '2', '9007199254740993', '9223372036854775807'],
      'the log names each plant by its exact id')
    for (const r of received) {
      t.equal(r.headers['content-type'], 'application/json')
      t.doesNotThrow(() => receiver.verify(own.secret, r), 'verifies with the subscription\'s secret')
      t.throws(() => receiver.verify(other.secret, r), 'does not verify with another subscription\'s secret')
      t.throws(() => receiver.verify(own.secret, { ...r, body: r.body.replace('"name":', '"name" :') }), 'the signature covers the body')
      const delivery = log.find((d) => d.id === r.headers['webhook-id'])
      t.ok(delivery, 'webhook-id is the id of a delivery in the log')
      t.equal(r.body.slice(0, r.body.indexOf(',')), `{"id":${delivery?.plantId}`, 'of the plant the body announces')
      t.equal(delivery?.attempts, 1)
      t.ok(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000) < 60, 'webhook-timestamp is now, in seconds')
    }
  }
  const ids = [...receiverA.received, ...receiverB.received].map((r) => r.headers['webhook-id'])
  t.equal(new Set(ids).size, 2 * cases.length, 'each subscription has its own delivery of each plant')
})

t.test('only a plant actually created is announced, once to each subscription', async (t) => {
  const app = await testApp(t, PRIVATE)
  const receiverA = await startReceiver(t)
  const receiverB = await startReceiver(t)
  const a = await subscribe(t, app, receiverA.url)
  const b = await subscribe(t, app, receiverB.url)

  t.equal((await postPlant(app, { id: 10, name: 'Ivy' })).statusCode, 200)
  t.equal((await postPlant(app, { id: 10, name: 'Ivy' })).statusCode, 200, 'an identical retry')
  t.equal((await postPlant(app, { id: 10, name: 'Other' })).statusCode, 409, 'a conflict')
  t.equal((await postPlant(app, { id: 10, name: 'Ivy', tag: 'x' })).statusCode, 409, 'a conflict on the tag')
  t.equal((await postPlant(app, { id: 'x', name: 'Bad' })).statusCode, 400, 'an invalid body')
  t.equal((await postPlant(app, { id: 12 })).statusCode, 400, 'no name')
  t.equal((await postPlant(app, '{"id":13,')).statusCode, 400, 'not JSON')
  t.equal((await postPlant(app, { id: 14, name: 'NoToken' }, { authorization: undefined })).statusCode, 401, 'no token')
  t.equal((await postPlant(app, '{"id":15,"name":"Text"}', { 'content-type': 'text/plain' })).statusCode, 415, 'not JSON by type')
  // Identical creates racing each other: one creates, the others find it; one announcement.
  const racing = await Promise.all(Array.from({ length: 5 }, async () => await postPlant(app, { id: 11, name: 'Fern', tag: 't' })))
  t.same(racing.map((r) => r.statusCode), [200, 200, 200, 200, 200])

  const expected = ['{"id":10,"name":"Ivy"}', '{"id":11,"name":"Fern","tag":"t"}']
  for (const [receiver, sub] of [[receiverA, a], [receiverB, b]] as const) {
    const log = await logUntil(app, sub.id, (log) => settled(log, 2))
    t.same(log.map((d) => d.plantId), ['11', '10'], 'the log holds one delivery per created plant, newest first')
    await receiver.waitFor(2)
  }
  await sleep(300) // anything more would have come by now
  for (const receiver of [receiverA, receiverB]) {
    t.same(receiver.received.map((r) => r.body).sort(), expected, 'exactly one request per created plant')
  }
  const ids = [...receiverA.received, ...receiverB.received].map((r) => r.headers['webhook-id'])
  t.equal(new Set(ids).size, 4, 'different webhook-ids for the two subscriptions')
})

t.test('a retried delivery keeps its webhook-id', async (t) => {
  const app = await testApp(t, { ...PRIVATE, ...FAST })
  const receiver = await startReceiver(t, (n) => n < 2 ? 500 : 200)
  const sub = await subscribe(t, app, receiver.url)
  await postPlant(app, { id: 1, name: 'Fern' })
  const received = await receiver.waitFor(3)
  const [delivery] = await logUntil(app, sub.id, (log) => settled(log, 1))
  t.same(received.map((r) => r.status), [500, 500, 200])
  t.same(received.map((r) => r.headers['webhook-id']), [delivery.id, delivery.id, delivery.id], 'the same webhook-id on every attempt')
  t.same(received.map((r) => r.body), Array(3).fill('{"id":1,"name":"Fern"}'))
  for (const r of received) t.doesNotThrow(() => receiver.verify(sub.secret, r), 'each attempt is signed')
  t.match(delivery, { status: 'delivered', attempts: 3, lastStatusCode: 200, plantId: '1', event: 'plant.created' })
  t.notOk('lastError' in delivery, 'no error once delivered')
  t.notOk('nextAttemptAt' in delivery, 'no next attempt once delivered')
  t.ok(delivery.deliveredAt !== undefined && Math.abs(Date.parse(delivery.deliveredAt) - Date.now()) < 60_000, 'deliveredAt is set, to now')
  await sleep(200)
  t.equal(receiver.received.length, 3, 'nothing more once delivered')
})

t.test('after the last attempt a delivery is failed until POST …/retry starts it over', async (t) => {
  const app = await testApp(t, { ...PRIVATE, ...FAST, WEBHOOK_MAX_ATTEMPTS: '3' })
  const receiver = await startReceiver(t, () => 503)
  const sub = await subscribe(t, app, receiver.url)
  await postPlant(app, { id: 7, name: 'Cactus' })
  let [delivery] = await logUntil(app, sub.id, (log) => settled(log, 1, 'failed'))
  t.match(delivery, { status: 'failed', attempts: 3, lastStatusCode: 503 })
  t.notOk('nextAttemptAt' in delivery, 'no next attempt')
  t.notOk('deliveredAt' in delivery)
  await sleep(500)
  t.equal(receiver.received.length, 3, 'no fourth attempt')

  receiver.answer(() => 200)
  const retry = await app.inject({ method: 'POST', url: `/webhooks/${sub.id}/deliveries/${delivery.id}/retry`, headers: AUTH })
  t.equal(retry.statusCode, 202)
  t.equal(retry.body, '', 'the 202 has no body, as the document says')
  await receiver.waitFor(4)
  ;[delivery] = await logUntil(app, sub.id, (log) => settled(log, 1))
  t.match(delivery, { status: 'delivered', attempts: 1, lastStatusCode: 200 })
  t.same(receiver.received.map((r) => r.headers['webhook-id']), Array(4).fill(delivery.id), 'the same webhook-id after the retry')
  t.same(receiver.received.map((r) => r.status), [503, 503, 503, 200])
})

t.test('a receiver that keeps failing is paused and probed one delivery at a time; once it answers, every delivery goes', async (t) => {
  // SQLite, the default: a claim waits for a commit, so attempts end while one is under way.
  const database = `sqlite:${join(t.testdir(), 'plants.db')}`
  const app = await testApp(t, { ...PRIVATE, WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_TIMEOUT_MS: '300', DATABASE_URL: database })
  const receiver = await startReceiver(t, () => 503)
  const sub = await subscribe(t, app, receiver.url)
  const started = Date.now()
  // Plants created all along, ten at a time: deliveries are being claimed when the pause
  // begins, and all through it (claimed during a pause, they once sat unsent after it).
  let created = 0
  while (Date.now() < started + 1500) {
    await Promise.all(Array.from({ length: 10 }, async () => await postPlant(app, { id: ++created, name: `Fern ${created}` })))
  }
  // Each delivery retried on its own schedule (100 ms, doubling, with jitter) would
  // have been attempted several times by now: over a thousand requests. Paused after
  // 10 failures in a row: the attempts already in flight (64 at most), then one probe
  // after 100, 200, 400 and 800 ms.
  const failing = receiver.received.length
  t.ok(failing < 150, `${failing} requests in about 1.5 s from ${created} failing deliveries`)
  await sleep(500)
  t.ok(receiver.received.length - failing <= 1, `${receiver.received.length - failing} in the next 0.5 s: the pauses grow`)
  const log = await deliveries(app, sub.id)
  t.ok(log.every((d) => d.status === 'pending'), 'nothing failed for good: a paused delivery uses no attempts')

  receiver.answer(() => 200)
  // The longest pause by now is 3.2 s; then every delivery goes at full concurrency.
  const delivered = (): number => new Set(receiver.received.filter((r) => r.status === 200).map((r) => r.headers['webhook-id'])).size
  const { value } = await retryUntil(async () => delivered(), (n) => n === created, 10_000, 20)
  t.equal(value, created, 'every plant delivered once the receiver answers')
  // An attempt is recorded after its answer, in the next commit; /metrics counts at most every 5 s.
  const { value: pending } = await retryUntil(async () => await metric(app, /^plant_store_webhook_deliveries_pending (\d+)$/m), (n) => n === 0, 12_000, 100)
  t.equal(pending, 0, 'none pending once the last attempts are recorded')
})

t.test('deleting a subscription stops its deliveries', async (t) => {
  const app = await testApp(t, { ...PRIVATE, ...FAST })
  const receiver = await startReceiver(t, () => 500)
  const sub = await subscribe(t, app, receiver.url)
  await postPlant(app, { id: 1, name: 'Fern' })
  await postPlant(app, { id: 2, name: 'Ivy' })
  await receiver.waitFor(6)
  t.equal((await app.inject({ method: 'DELETE', url: `/webhooks/${sub.id}`, headers: AUTH })).statusCode, 204)
  await sleep(100) // an attempt already on its way may still arrive
  const count = receiver.received.length
  await sleep(500)
  t.equal(receiver.received.length, count, 'no request after the delete')
  const log = await app.inject({ url: `/webhooks/${sub.id}/deliveries`, headers: AUTH })
  t.equal(log.statusCode, 404, 'its delivery log is gone')
  const pending = await metric(app, /^plant_store_webhook_deliveries_pending (\d+)$/m)
  t.equal(pending, 0, 'its pending deliveries were dropped')
})

t.test('/metrics counts attempts by outcome and the pending deliveries', async (t) => {
  const app = await testApp(t, { ...PRIVATE, WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_TIMEOUT_MS: '10000' })
  // A answers 500 to its first two requests, then 200; B never answers, so its deliveries stay pending.
  const answering = await startReceiver(t, (n) => n < 2 ? 500 : 200)
  const hanging = await startReceiver(t, () => 'hang')
  const a = await subscribe(t, app, answering.url)
  const b = await subscribe(t, app, hanging.url)
  for (let id = 1; id <= 3; id++) await postPlant(app, { id, name: `p${id}` })
  await logUntil(app, a.id, (log) => settled(log, 3))
  await hanging.waitFor(3)
  t.ok(settled(await deliveries(app, b.id), 3, 'pending'), 'B: three pending')
  t.equal(answering.received.length, 5, 'A: five requests')

  t.equal(await metric(app, /^plant_store_webhook_attempt_duration_seconds_count\{outcome="delivered"\} (\d+)$/m), 3)
  t.equal(await metric(app, /^plant_store_webhook_attempt_duration_seconds_count\{outcome="retried"\} (\d+)$/m), 2)
  t.equal(await metric(app, /^plant_store_webhook_attempt_duration_seconds_count\{outcome="failed"\} (\d+)$/m), undefined, 'none failed')
  t.equal(await metric(app, /^plant_store_webhook_deliveries_pending (\d+)$/m), 3, 'B\'s three')
  await hanging.close()
})

t.test('a flood of /metrics scrapes counts the pending deliveries once every 5 s, not once a scrape', async (t) => {
  // Counting scans the outbox (40 ms at a million on SQLite): a scrape within 5 s of a
  // count is answered with that count.
  const pending = /^plant_store_webhook_deliveries_pending (\d+)$/m
  const app = await testApp(t, { ...PRIVATE, WEBHOOK_TIMEOUT_MS: '10000' })
  const hanging = await startReceiver(t, () => 'hang')
  await subscribe(t, app, hanging.url)
  for (let id = 1; id <= 3; id++) await postPlant(app, { id, name: `p${id}` })
  const counted = performance.now()
  t.equal(await metric(app, pending), 3, 'counted at the first scrape')
  for (let id = 4; id <= 5; id++) await postPlant(app, { id, name: `p${id}` })
  const flood = await Promise.all(Array.from({ length: 200 }, async () => await metric(app, pending)))
  t.same(new Set(flood), new Set([3]), '200 scrapes within the 5 s: the count of the first, not the 5 pending now')
  await sleep(5000 - (performance.now() - counted) + 50)
  t.equal(await metric(app, pending), 5, 'counted again once 5 s have passed')
  await hanging.close()
})
