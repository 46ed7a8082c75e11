import { createServer as createHttpServer, type ServerResponse } from 'node:http'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect, createServer as createNetServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import type { Resolve } from '../../src/webhooks/resolver.ts'
import { AUTH, TOKEN, postPlant, testApp } from '../helpers/app.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { retryUntil } from '../helpers/wait.ts'

// How deliveries behave, end to end: a plant created through app.inject is POSTed by the
// dispatcher to a real HTTP receiver on 127.0.0.1, and the delivery log says what came of it.

const PRIVATE = { WEBHOOK_ALLOW_PRIVATE: 'true' }
// Retries come quickly, so that a test sees several attempts.
const FAST = { WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_TIMEOUT_MS: '300' }
// A failed attempt is retried so late that a test sees only the first one.
const SLOW_RETRY = { WEBHOOK_RETRY_BASE_MS: '3600000' }

/** A delivery as the log lists it, plantId kept as the exact integer text it was written as. */
interface LoggedDelivery {
  id: string
  event: string
  plantId: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  lastStatusCode?: number
  lastError?: string
  nextAttemptAt?: string
  createdAt: string
  deliveredAt?: string
}

async function subscribe (t: Test, app: FastifyInstance, url: string): Promise<{ id: string, secret: string }> {
  const res = await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url } })
  t.equal(res.statusCode, 201, `subscribed to ${url}: ${res.body}`)
  const { id, secret } = res.json()
  return { id, secret }
}

/** The delivery log, newest first; fails the test unless it answers 200. */
async function deliveries (app: FastifyInstance, webhook: string): Promise<LoggedDelivery[]> {
  const res = await app.inject({ url: `/webhooks/${webhook}/deliveries?limit=100`, headers: AUTH })
  if (res.statusCode !== 200) throw new Error(`the delivery log answered ${res.statusCode}: ${res.body}`)
  // JSON.parse would round an id beyond 2^53: the integer is read as its text.
  return JSON.parse(res.body.replace(/"plantId":(-?\d+)/g, '"plantId":"$1"'))
}

/** Waits until the log satisfies `done`; returns the last log read (the assertions that follow tell what was wrong). */
async function logUntil (
  app: FastifyInstance,
  webhook: string,
  done: (log: LoggedDelivery[]) => boolean,
  timeoutMs = 10_000
): Promise<LoggedDelivery[]> {
  return (await retryUntil(async () => await deliveries(app, webhook), done, timeoutMs, 20)).value
}

const settled = (log: LoggedDelivery[], count: number, status: LoggedDelivery['status'] = 'delivered'): boolean =>
  log.length === count && log.every((d) => d.status === status)

/** A port of 127.0.0.1 that nothing listens on (it did a moment ago). */
async function deadPort (): Promise<number> {
  const server = createNetServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

async function metric (app: FastifyInstance, line: RegExp): Promise<number | undefined> {
  const text = (await app.inject({ url: '/metrics', headers: AUTH })).body
  const found = line.exec(text)
  return found === null ? undefined : Number(found[1])
}

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

t.test('a redirect, a timeout and a refused connection are failed attempts, each saying why', async (t) => {
  const app = await testApp(t, { ...PRIVATE, ...SLOW_RETRY, WEBHOOK_TIMEOUT_MS: '300' })
  const redirecting = await startReceiver(t, () => 302)
  const hanging = await startReceiver(t, () => 'hang')
  const redirect = await subscribe(t, app, redirecting.url)
  const timeout = await subscribe(t, app, hanging.url)
  const refused = await subscribe(t, app, `http://127.0.0.1:${await deadPort()}/hooks`)
  await postPlant(app, { id: 1, name: 'Fern' })
  const tried = (log: LoggedDelivery[]): boolean => log.length === 1 && log[0].attempts >= 1

  const [redirected] = await logUntil(app, redirect.id, tried)
  t.match(redirected, { status: 'pending', attempts: 1, lastStatusCode: 302, lastError: 'redirects are not followed' })
  t.type(redirected.nextAttemptAt, 'string', 'pending, with a next attempt')
  t.equal(redirecting.received.length, 1)

  const [timedOut] = await logUntil(app, timeout.id, tried)
  t.match(timedOut, { status: 'pending', attempts: 1, lastError: /no answer within 300 ms/ })
  t.notOk('lastStatusCode' in timedOut, 'no status: nothing answered')
  t.equal(hanging.received.length, 1, 'the request did arrive')

  const [connectRefused] = await logUntil(app, refused.id, tried)
  // The kind of failure: undici's own words name the address connected to.
  t.match(connectRefused, { status: 'pending', attempts: 1, lastError: 'the connection was refused' })
  t.notMatch(connectRefused.lastError, /127\.0\.0\.1|ECONNREFUSED/)
  t.notOk('lastStatusCode' in connectRefused)
})

/**
 * A port of 127.0.0.1 whose connections never complete: a process listens on it with the
 * shortest backlog and never accepts, and two connections fill its queue, so the kernel
 * drops every further SYN and a connect waits, as one to a host that has gone does.
 */
async function blackHole (t: Test): Promise<number> {
  const child = spawn(process.execPath, ['-e', `
    const server = require('node:net').createServer()
    server.listen({ port: 0, host: '127.0.0.1', backlog: 0 }, () => {
      console.log(server.address().port)
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000)
    })`], { stdio: ['ignore', 'pipe', 'inherit'] })
  const fillers: Socket[] = []
  t.teardown(() => {
    for (const socket of fillers) socket.destroy()
    child.kill('SIGKILL')
  })
  const [line] = await once(child.stdout!, 'data') as [Buffer]
  const port = Number(line.toString())
  for (let i = 0; i < 2; i++) fillers.push(connect(port, '127.0.0.1').on('error', () => {}))
  // Until a connect no longer completes.
  const { value: full } = await retryUntil(async () => await new Promise<boolean>((resolve) => {
    const probe = connect(port, '127.0.0.1')
    fillers.push(probe.on('error', () => {}))
    probe.on('connect', () => resolve(false))
    setTimeout(() => resolve(true), 200)
  }), (full) => full, 5000, 0)
  t.ok(full, 'a connect to the port no longer completes')
  return port
}

t.test('a receiver that never accepts the connection: the attempt fails at its deadline, not at the kernel\'s', async (t) => {
  const app = await testApp(t, { ...PRIVATE, ...SLOW_RETRY, WEBHOOK_TIMEOUT_MS: '300' })
  const gone = await subscribe(t, app, `http://127.0.0.1:${await blackHole(t)}/hooks`)
  const started = Date.now()
  await postPlant(app, { id: 1, name: 'Fern' })
  const [attempt] = await logUntil(app, gone.id, (log) => log.length === 1 && log[0].attempts >= 1)
  const ms = Date.now() - started
  t.match(attempt, { status: 'pending', attempts: 1, lastError: /^no (answer|connection) within 300 ms$/ })
  t.notOk('lastStatusCode' in attempt, 'no status: nothing answered')
  // A connect left to the kernel would retry its SYN for about two minutes.
  t.ok(ms < 5000, `recorded after ${ms} ms`)
})

/**
 * A receiver on raw sockets, for answers no HTTP server would give: `answer` is called
 * with each connection once a request has arrived on it. Counts the connections open at
 * once, at most.
 */
async function rawReceiver (t: Test, answer: (socket: Socket) => void): Promise<{ url: string, mostOpen: () => number }> {
  const sockets = new Set<Socket>()
  let most = 0
  const listener = createNetServer((socket) => {
    sockets.add(socket)
    most = Math.max(most, sockets.size)
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
    socket.once('data', () => answer(socket))
  })
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => listener.close(() => resolve()))
  })
  return { url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}/hooks`, mostOpen: () => most }
}

/** Writes `chunk` for as long as the connection takes it. */
function flood (socket: Socket, chunk: string): void {
  const pump = (): void => { while (socket.writable && socket.write(chunk)); }
  socket.on('drain', pump)
  pump()
}

t.test('a receiver that answers 200 and then holds the body back holds no more of the service\'s connections than its attempts in flight', async (t) => {
  // The slot was freed at the status: every next attempt opened a connection while the
  // others waited for their bodies, until no file was left for the store (3,000 creates:
  // 3,028 open files, against 64 attempts at a time).
  const app = await testApp(t, { ...PRIVATE, ...SLOW_RETRY, WEBHOOK_CONCURRENCY: '4', WEBHOOK_TIMEOUT_MS: '300' })
  const receiver = await rawReceiver(t, (socket) => { socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n') })
  const sub = await subscribe(t, app, receiver.url)
  for (let id = 1; id <= 24; id++) t.equal((await postPlant(app, { id, name: `p${id}` })).statusCode, 200)
  const log = await logUntil(app, sub.id, (log) => settled(log, 24, 'delivered'), 15_000)
  t.ok(settled(log, 24, 'delivered'), 'each delivered: the status decides, the body is only drained')
  // Four attempts at a time, and the connections they end still closing as the next open.
  t.ok(receiver.mostOpen() <= 8, `at most 8 connections open at once (${receiver.mostOpen()}), not one a delivery`)
})

t.test('a receiver that floods the service with what undici parses unseen fails its attempt at once, not at the deadline', async (t) => {
  const app = await testApp(t, { ...PRIVATE, ...SLOW_RETRY, WEBHOOK_TIMEOUT_MS: '10000' })
  const cases: Array<[string, (socket: Socket) => void, RegExp]> = [
    // Each held a core for the attempt's whole 10 s, gigabytes of it.
    ['interim answers without end', (socket) => { flood(socket, 'HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n'.repeat(100)) },
      /^more than 8 interim \(1xx\) answers$/],
    ['a reason phrase without end', (socket) => { socket.write('HTTP/1.1 200 '); flood(socket, 'R'.repeat(65536)) },
      /^the receiver sent more than 1 MiB within 100 ms$/],
    ['a chunk extension without end, after a 200', (socket) => { socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;'); flood(socket, 'e'.repeat(65536)) },
      /^the receiver sent more than 1 MiB within 100 ms$/]
  ]
  let id = 0
  for (const [what, answer, error] of cases) {
    const receiver = await rawReceiver(t, answer)
    const sub = await subscribe(t, app, receiver.url)
    const started = Date.now()
    await postPlant(app, { id: ++id, name: what })
    const [attempt] = await logUntil(app, sub.id, (log) => log[0]?.attempts === 1)
    const ms = Date.now() - started
    t.match(attempt, { status: 'pending', lastError: error }, `${what}: failed, and retried later`)
    t.ok(ms < 5000, `${what}: recorded after ${ms} ms, well before the 10 s deadline`)
    t.equal((await app.inject({ method: 'DELETE', url: `/webhooks/${sub.id}`, headers: AUTH })).statusCode, 204)
  }
})

t.test('a name that resolves to a private address at attempt time is refused before connecting (DNS rebinding)', async (t) => {
  // Counts every connection on its port: a TLS handshake would never reach an HTTP receiver's handler.
  const sockets: Socket[] = []
  const listener = createNetServer((socket) => sockets.push(socket))
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => listener.close(() => resolve()))
  })
  const resolved: string[] = []
  const resolve: Resolve = async (hostname) => {
    resolved.push(hostname)
    return [{ address: resolved.length === 1 ? '93.184.215.14' : '127.0.0.1', family: 4 }]
  }
  const app = await testApp(t, SLOW_RETRY, { resolve })
  const { port } = listener.address() as AddressInfo
  const sub = await subscribe(t, app, `https://rebind.example:${port}/hook`)
  t.same(resolved, ['rebind.example'], 'resolved once to subscribe: a public address')
  await postPlant(app, { id: 1, name: 'Fern' })
  const [delivery] = await logUntil(app, sub.id, (log) => log.length === 1 && log[0].attempts >= 1)
  t.match(delivery, { status: 'pending', attempts: 1, lastError: 'the host resolves to an address that is not public; webhooks go to public addresses only' })
  t.notMatch(delivery.lastError, /127\.0\.0\.1/, 'without the address it resolved to')
  t.notOk('lastStatusCode' in delivery)
  t.ok(resolved.length >= 2, 'resolved again for the attempt')
  await sleep(100)
  t.equal(sockets.length, 0, 'nothing connected')
})

t.test('a private subscription made under WEBHOOK_ALLOW_PRIVATE is refused once the app runs without it', async (t) => {
  const database = `sqlite:${t.testdir()}/plants.db`
  const receiver = await startReceiver(t)
  const before = await buildApp(loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: database, ...PRIVATE }))
  const sub = await subscribe(t, before, receiver.url)
  await before.close()

  const app = await testApp(t, { DATABASE_URL: database, ...SLOW_RETRY })
  await postPlant(app, { id: 1, name: 'Fern' })
  const [delivery] = await logUntil(app, sub.id, (log) => log.length === 1 && log[0].attempts >= 1)
  // Refused on both counts: http, and a loopback address.
  t.match(delivery, { status: 'pending', attempts: 1, lastError: 'the url must be https' })
  await sleep(100)
  t.equal(receiver.received.length, 0, 'the receiver was never called')
})

t.test('an https subscription to a loopback address made under WEBHOOK_ALLOW_PRIVATE is refused before connecting once the app runs without it', async (t) => {
  const database = `sqlite:${t.testdir()}/plants.db`
  const listener = createNetServer((socket: Socket) => socket.destroy())
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { listener.close() })
  let connections = 0
  listener.on('connection', () => { connections++ })
  const before = await buildApp(loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: database, ...PRIVATE }))
  const sub = await subscribe(t, before, `https://127.0.0.1:${(listener.address() as AddressInfo).port}/hook`)
  await before.close()

  const app = await testApp(t, { DATABASE_URL: database, ...SLOW_RETRY })
  await postPlant(app, { id: 1, name: 'Fern' })
  const [delivery] = await logUntil(app, sub.id, (log) => log.length === 1 && log[0].attempts >= 1)
  t.match(delivery, { status: 'pending', attempts: 1, lastError: 'the host is not a public address; webhooks go to public addresses only' })
  t.equal(connections, 0, 'no connection was made')
})

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

t.test('an endless answer is not read to its end: the attempt counts its status and the connection is dropped long before the timeout', async (t) => {
  const app = await testApp(t, { ...PRIVATE, ...SLOW_RETRY, WEBHOOK_TIMEOUT_MS: '30000' })
  const dropped: number[] = []
  const started = Date.now()
  const server = await startServer(t, (_path, _body, response) => {
    response.writeHead(200, { 'content-type': 'application/octet-stream' })
    const chunk = Buffer.alloc(16 * 1024, 'x')
    const pour = (): void => {
      while (!response.destroyed && response.write(chunk));
    }
    response.on('drain', pour)
    response.on('close', () => dropped.push(Date.now() - started))
    pour()
  })
  const sub = await subscribe(t, app, `${server.url}/endless`)
  await postPlant(app, { id: 1, name: 'Fern' })
  const log = await logUntil(app, sub.id, (log) => settled(log, 1))
  t.match(log, [{ status: 'delivered', attempts: 1, lastStatusCode: 200 }], 'decided by its status')
  await retryUntil(async () => dropped.length, (n) => n === 1, 5000, 20)
  t.equal(dropped.length, 1, 'the service closed the connection')
  t.ok(dropped[0] < 5000, `closed after ${dropped[0]} ms, not at the 30 s timeout`)
  // The next attempt takes a new connection and is delivered too.
  await postPlant(app, { id: 2, name: 'Moss' })
  t.ok(settled(await logUntil(app, sub.id, (log) => settled(log, 2)), 2), 'the next one delivered')
  await server.close()
})

t.test('an informational answer (103) before the final status is not the outcome: the final status decides', async (t) => {
  const app = await testApp(t, { ...PRIVATE, ...SLOW_RETRY })
  const server = await startServer(t, (_path, _body, response) => {
    response.writeEarlyHints({ link: '</hints>; rel=preload' })
    setTimeout(() => response.writeHead(204).end(), 20)
  })
  const sub = await subscribe(t, app, `${server.url}/hints`)
  await postPlant(app, { id: 1, name: 'Fern' })
  const log = await logUntil(app, sub.id, (log) => log.length === 1 && log[0].attempts >= 1)
  t.match(log, [{ status: 'delivered', attempts: 1, lastStatusCode: 204 }])
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

/** A local HTTP server on 127.0.0.1 whose handler gets each request's path and body and answers as it likes (or never). */
async function startServer (
  t: Test,
  handle: (path: string, body: string, response: ServerResponse) => void
): Promise<{ url: string, close: () => Promise<void> }> {
  const server = createHttpServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => handle(request.url ?? '', Buffer.concat(chunks).toString('utf8'), response))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  let closing: Promise<void> | undefined
  const close = async (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
    await closing
  }
  t.teardown(close)
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close }
}
