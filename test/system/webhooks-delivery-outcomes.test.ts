import type { Socket } from 'node:net'
import { createServer as createNetServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import type { Resolve } from '../../src/webhooks/resolver.ts'
import { AUTH, TOKEN, postPlant, testApp } from '../helpers/app.ts'
import { blackHole, deadPort, flood, rawReceiver, startServer } from '../helpers/odd-receivers.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { retryUntil } from '../helpers/wait.ts'
import { PRIVATE, SLOW_RETRY, type LoggedDelivery, logUntil, settled, subscribe } from '../helpers/webhook-app.ts'

// How one attempt ends, end to end (app.inject to real receivers on 127.0.0.1): against a
// receiver that redirects, hangs, refuses, never accepts or answers oddly, and at an address refused at attempt time.

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
