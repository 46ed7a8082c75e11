import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import { TOKEN, postPlant, testApp } from '../helpers/app.ts'
import { startServer } from '../helpers/odd-receivers.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { retryUntil } from '../helpers/wait.ts'
import { PRIVATE, SLOW_RETRY, deliveries, logUntil, settled, subscribe } from '../helpers/webhook-app.ts'

// Attempts in flight, end to end (app.inject to real receivers on 127.0.0.1): WEBHOOK_CONCURRENCY
// per subscription, a hanging receiver holding up only its own, and what closing the app does with them.

t.test('a hanging receiver holds up only its own subscription\'s deliveries', async (t) => {
  const app = await testApp(t, { ...PRIVATE, ...SLOW_RETRY, WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_CONCURRENCY: '2' })
  const hanging = await startReceiver(t, () => 'hang')
  const answering = await startReceiver(t)
  const a = await subscribe(t, app, hanging.url)
  const b = await subscribe(t, app, answering.url)
  for (let id = 1; id <= 6; id++) await postPlant(app, { id, name: `p${id}` })
  await answering.waitFor(6)
  t.same(answering.received.map((r) => r.body).sort(), [1, 2, 3, 4, 5, 6].map((id) => `{"id":${id},"name":"p${id}"}`))
  t.ok(settled(await logUntil(app, b.id, (log) => settled(log, 6)), 6), 'B: all delivered')
  await hanging.waitFor(2)
  await sleep(100)
  t.equal(hanging.received.length, 2, 'A: WEBHOOK_CONCURRENCY attempts in flight, no more')
  const logA = await deliveries(app, a.id)
  t.ok(settled(logA, 6, 'pending'), 'A: all still pending')
  t.ok(logA.every((d) => d.attempts === 0), 'A: no attempt finished')
  await hanging.close() // the hanging attempts end now, not at the timeout
})

t.test('a hanging receiver does not hold up another subscription to the same host and port', async (t) => {
  const app = await testApp(t, { ...PRIVATE, ...SLOW_RETRY, WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_CONCURRENCY: '2' })
  // One server, two paths: /a hangs, /b answers 200.
  const answered: string[] = []
  const server = await startServer(t, (path, body, response) => {
    if (path === '/a') return
    answered.push(body)
    response.end()
  })
  const a = await subscribe(t, app, `${server.url}/a`)
  const b = await subscribe(t, app, `${server.url}/b`)
  for (let id = 1; id <= 4; id++) await postPlant(app, { id, name: `p${id}` })
  // Well within A's timeout: B's answers come in milliseconds.
  const log = await logUntil(app, b.id, (log) => settled(log, 4), 1500)
  // Both share one host and port: a socket limit per origin would queue B behind A.
  t.ok(settled(log, 4), `B: all delivered while A hangs: ${JSON.stringify(log.map((d) => d.status))}`)
  t.equal(answered.length, 4, 'B: every plant received')
  t.ok(settled(await deliveries(app, a.id), 4, 'pending'), 'A: all still pending')
  await server.close()
})

t.test('deliveries claimed ahead fill each freed slot at once: all delivered, never more than WEBHOOK_CONCURRENCY at a time', async (t) => {
  // A timeout long enough that a delivery left behind would only come after the test's wait.
  const app = await testApp(t, { ...PRIVATE, ...SLOW_RETRY, WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_CONCURRENCY: '3' })
  let inFlight = 0
  let most = 0
  const bodies: string[] = []
  const server = await startServer(t, (_path, body, response) => {
    inFlight++
    most = Math.max(most, inFlight)
    bodies.push(body)
    setTimeout(() => {
      inFlight--
      response.end()
    }, 20)
  })
  const sub = await subscribe(t, app, `${server.url}/hooks`)
  const PLANTS = 20
  await Promise.all(Array.from({ length: PLANTS }, async (_, i) => await postPlant(app, { id: i + 1, name: `p${i + 1}` })))
  const log = await logUntil(app, sub.id, (log) => settled(log, PLANTS), 4000)
  t.ok(settled(log, PLANTS), `all ${PLANTS} delivered well within a lease: ${JSON.stringify(log.map((d) => d.status))}`)
  t.equal(bodies.length, PLANTS, 'each received once')
  t.equal(most, 3, 'three attempts at a time at most, and three reached')
  await server.close()
})

t.test('closing the app waits for the attempt in flight and records it', async (t) => {
  const database = `sqlite:${t.testdir()}/plants.db`
  let release: () => void = () => {}
  const released = new Promise<void>((resolve) => { release = resolve })
  t.teardown(() => release())
  const bodies: string[] = []
  const server = await startServer(t, (_path, body, response) => {
    bodies.push(body)
    released.then(() => response.end(), () => {})
  })
  const app = await buildApp(loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: database, ...PRIVATE, WEBHOOK_TIMEOUT_MS: '10000' }))
  const sub = await subscribe(t, app, `${server.url}/hooks`)
  await postPlant(app, { id: 1, name: 'Fern' })
  await retryUntil(async () => bodies.length, (n) => n === 1, 5000, 10)
  t.equal(bodies.length, 1, 'the attempt is in flight')

  let closed = false
  const closing = app.close().then(() => { closed = true })
  await sleep(300)
  t.notOk(closed, 'close waits while the attempt is in flight')
  release()
  await closing
  t.ok(closed, 'close resolves once the receiver answered')

  const again = await testApp(t, { DATABASE_URL: database, ...PRIVATE })
  const [delivery] = await deliveries(again, sub.id)
  t.match(delivery, { status: 'delivered', attempts: 1, lastStatusCode: 200, plantId: '1' }, 'recorded before the store closed')
  t.equal(bodies.length, 1, 'not attempted again')
})

t.test('closing cuts off an attempt still running after half of SHUTDOWN_GRACE_MS, records it and leaves it pending', async (t) => {
  const database = `sqlite:${t.testdir()}/plants.db`
  const receiver = await startReceiver(t, () => 'hang')
  const app = await buildApp(loadConfig({
    API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: database, ...PRIVATE, ...SLOW_RETRY, WEBHOOK_TIMEOUT_MS: '60000', SHUTDOWN_GRACE_MS: '400'
  }))
  const sub = await subscribe(t, app, receiver.url)
  await postPlant(app, { id: 1, name: 'Fern' })
  await receiver.waitFor(1)
  const started = Date.now()
  await app.close()
  const ms = Date.now() - started
  t.ok(ms < 60_000, `closed in ${ms} ms, not after the attempt's own timeout`)

  const again = await testApp(t, { DATABASE_URL: database, ...SLOW_RETRY })
  const [delivery] = await deliveries(again, sub.id)
  t.match(delivery, { status: 'pending', attempts: 1, lastError: /^cut off: the service shut down/ }, 'recorded, pending for later')
})

t.test('closing hands back the deliveries claimed ahead: the next start attempts them at once, not after their lease', async (t) => {
  const database = `sqlite:${t.testdir()}/plants.db`
  // One attempt at a time and one claimed ahead; a lease of 3 × 20 s + 1 s, far beyond the wait below.
  const settings = { ...PRIVATE, WEBHOOK_CONCURRENCY: '1', WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_TIMEOUT_MS: '20000' }
  const receiver = await startReceiver(t, () => 'hang')
  const app = await buildApp(loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: database, ...settings, SHUTDOWN_GRACE_MS: '400' }))
  const sub = await subscribe(t, app, receiver.url)
  for (let id = 1; id <= 3; id++) await postPlant(app, { id, name: `p${id}` })
  await receiver.waitFor(1)
  await sleep(200) // the claim ahead commits
  await app.close()
  t.equal(receiver.received.length, 1, 'one attempt in flight when closing, cut off')

  receiver.answer(() => 200)
  const again = await testApp(t, { DATABASE_URL: database, ...settings })
  const log = await logUntil(again, sub.id, (log) => settled(log, 3), 5000)
  t.ok(settled(log, 3), `all three delivered within 5 s of the restart: ${JSON.stringify(log.map((d) => d.status))}`)
})
