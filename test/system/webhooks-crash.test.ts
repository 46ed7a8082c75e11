import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import t, { type Test } from 'tap'
import { Webhook } from 'standardwebhooks'
import { TOKEN } from '../helpers/app.ts'
import { checkDelivered } from '../helpers/delivered-after-crash.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { startServer, waitForLine, type RunningServer } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'
import { deliveryLog, subscribe, webhookId } from '../helpers/webhook-client.ts'

// The webhook outbox against real processes on a SQLite file: a delivery is written in
// the plant's transaction, so kill -9 at any moment neither loses the announcement of an
// acknowledged plant nor announces one that was never stored; and a graceful stop lets
// the attempt in flight finish and records it.

const BIG = 2n ** 53n

/** The exact JSON of a plant: what a create sends and what its announcement must carry, byte for byte. */
const plantJson = (id: bigint, name: string, tag?: string): string =>
  `{"id":${id},"name":${JSON.stringify(name)}${tag === undefined ? '' : `,"tag":${JSON.stringify(tag)}`}}`

function envFor (t: Test, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    API_TOKENS: TOKEN,
    DATABASE_URL: `sqlite:${t.testdir()}/plants.db`,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    ...extra
  }
}

/** SIGKILL, and resolves once the process is gone. */
async function kill9 (t: Test, server: RunningServer): Promise<void> {
  server.child.kill('SIGKILL')
  t.equal(await server.exited, null, 'killed by a signal')
}

t.test('kill -9 while attempts are in flight: after a restart every acknowledged plant is delivered, under the same webhook-id', async (t) => {
  // A lease of 3 × 500 + 1000 ms: the restarted process takes over the killed one's attempts 2.5 s after they were claimed.
  const env = envFor(t, { WEBHOOK_TIMEOUT_MS: '500', WEBHOOK_RETRY_BASE_MS: '100' })
  const receiver = await startReceiver(t, () => 'hang')
  let server = await startServer(t, env)
  const subscription = await subscribe(t, server, receiver.url)

  const tried = new Map<string, string>()
  const acked = new Set<string>()
  for (let i = 0; i < 20; i++) {
    const id = i % 2 === 0 ? BIG + BigInt(i) : BigInt(i + 1)
    const body = plantJson(id, `plant "${i}" ✓`, i % 3 === 0 ? undefined : `tag ${i % 3}`)
    tried.set(String(id), body)
    const res = await server.request('POST', '/plants', { body })
    t.equal(res.statusCode, 200, `plant ${id} created`)
    acked.add(String(id))
  }
  // Answered 200, 409 and 400: none of them creates anything, so none announces anything.
  const first = [...tried][0]
  t.equal((await server.request('POST', '/plants', { body: first[1] })).statusCode, 200, 'a retry of a created plant')
  t.equal((await server.request('POST', '/plants', { body: plantJson(BigInt(first[0]), 'another') })).statusCode, 409, 'a conflict')
  t.equal((await server.request('POST', '/plants', { body: '{"id":77}' })).statusCode, 400, 'an invalid plant')
  tried.set('77', '')

  await receiver.waitFor(1)
  // A burst of creates the kill interrupts: each is announced if and only if it was stored.
  const burst = Array.from({ length: 10 }, async (_, i) => {
    const id = BIG * 4n + BigInt(i)
    const body = plantJson(id, `burst ${i}`)
    tried.set(String(id), body)
    const res = await server.request('POST', '/plants', { body }).catch(() => undefined)
    if (res?.statusCode === 200) acked.add(String(id))
  })
  await sleep(5)
  await kill9(t, server)
  await Promise.all(burst)
  const before = receiver.received.length
  t.ok(before >= 1 && receiver.received.every((r) => r.status === 0), `${before} attempts were in flight, none answered`)

  receiver.answer(() => 200)
  server = await startServer(t, env)
  await checkDelivered(t, server, receiver, subscription, tried, acked, before)
  t.equal(receiver.received.filter((r) => r.status === 200).length, new Set(receiver.received.map(webhookId)).size, 'each delivered once')
})

t.test('kill -9 right after the creates are acknowledged, before their deliveries are attempted: all delivered after a restart', async (t) => {
  // One attempt at a time, each claim and record a durable commit: most deliveries are not attempted yet when the kill comes.
  const env = envFor(t, { WEBHOOK_CONCURRENCY: '1', WEBHOOK_TIMEOUT_MS: '500', WEBHOOK_RETRY_BASE_MS: '100' })
  const receiver = await startReceiver(t)
  let server = await startServer(t, env)
  const subscription = await subscribe(t, server, receiver.url)

  const tried = new Map<string, string>()
  const acked = new Set<string>()
  await Promise.all(Array.from({ length: 30 }, async (_, i) => {
    const id = BIG * 2n + BigInt(i * 7)
    const body = plantJson(id, `quick ${i}`, 'q')
    tried.set(String(id), body)
    const res = await server.request('POST', '/plants', { body })
    if (res.statusCode === 200) acked.add(String(id))
  }))
  server.child.kill('SIGKILL')
  await server.exited
  const before = receiver.received.length
  t.equal(acked.size, 30, 'every create acknowledged before the kill')
  t.ok(before < 30, `${before} of 30 deliveries attempted before the kill; the rest were only in the outbox`)

  server = await startServer(t, env)
  await checkDelivered(t, server, receiver, subscription, tried, acked, before)
})

t.test('a subscription whose stored URL does not parse fails its attempts, recorded; the service and the other receivers go on', async (t) => {
  const env = envFor(t)
  const server = await startServer(t, env)
  const receiver = await startReceiver(t)
  const healthy = await subscribe(t, server, receiver.url)
  // The API stores only URLs it has parsed: this one is written into the file by hand (an
  // operator, a restored backup, a future version's row), while the service runs.
  const broken = { id: `wh_${'0'.repeat(32)}` }
  const db = new Database(env.DATABASE_URL!.slice('sqlite:'.length))
  db.prepare('INSERT INTO webhooks (id, url, secret, created_at) SELECT ?, ?, secret, created_at FROM webhooks WHERE id = ?')
    .run(broken.id, 'not a url', healthy.id)
  db.close()
  t.equal((await server.request('POST', '/plants', { body: { id: 1, name: 'Fern' } })).statusCode, 200)
  await receiver.waitFor(1)
  const { value: log } = await retryUntil(async () => await deliveryLog(server, broken.id), (log) => log[0]?.attempts === 1, 5000, 50)
  t.equal(log[0].status, 'pending', 'the attempt failed and is retried')
  t.equal(log[0].lastError, 'the url is not an absolute URL', 'saying why')
  t.equal(server.child.exitCode, null, 'the service still runs')
  t.equal((await deliveryLog(server, healthy.id))[0].status, 'delivered', 'the other subscription was delivered')
  t.equal((await server.request('POST', '/plants', { body: { id: 2, name: 'Ivy' } })).statusCode, 200, 'and creates go on')
  await receiver.waitFor(2)
})

t.test('logs: one warning per failed attempt naming the webhook, the delivery and the status; nothing per success; no token', async (t) => {
  const receiver = await startReceiver(t, (n) => [500, 503][n] ?? 200)
  const server = await startServer(t, envFor(t, { WEBHOOK_RETRY_BASE_MS: '50' }))
  const subscription = await subscribe(t, server, receiver.url)
  t.equal((await server.request('POST', '/plants', { body: plantJson(BIG + 1n, 'logged') })).statusCode, 200)
  await receiver.waitFor(3)
  const { value: log } = await retryUntil(async () => await deliveryLog(server, subscription.id), (log) => log[0]?.status === 'delivered', 5000, 50)
  t.match(log, [{ status: 'delivered', attempts: 3, lastStatusCode: 200, plantId: String(BIG + 1n) }], 'delivered on the third attempt')
  await sleep(200)

  const lines = server.stdout.map((line) => JSON.parse(line))
  const delivery = webhookId(receiver.received[0])
  t.equal(new Set(receiver.received.map(webhookId)).size, 1, 'one delivery, attempted three times')
  const warnings = lines.filter((line) => line.level >= 40)
  t.equal(warnings.length, 2, `one warning per failed attempt, nothing else: ${JSON.stringify(warnings)}`)
  t.match(warnings, [
    { level: 40, webhook: subscription.id, delivery, attempt: 1, statusCode: 500, retryInMs: Number },
    { level: 40, webhook: subscription.id, delivery, attempt: 2, statusCode: 503, retryInMs: Number }
  ])
  // The start line names the database file, whose test folder is named after this test.
  const told = lines.filter((line) => line.level < 40 && line.database === undefined)
  t.same(told.filter((line) => line.delivery !== undefined || /webhook|deliver/i.test(line.msg)), [],
    'no info line for the attempt that succeeded')
  for (const secret of [TOKEN, subscription.secret, subscription.secret.slice('whsec_'.length)]) {
    t.notOk([...server.stdout, ...server.stderr].some((line) => line.includes(secret)), 'no line holds the token or the signing secret')
  }
})

/** A receiver whose answers the test gives, one at a time: an attempt stays in flight until released. */
async function heldReceiver (t: Test): Promise<{ url: string, arrived: Array<{ headers: IncomingHttpHeaders, body: string }>, release: (status: number) => void }> {
  const held: ServerResponse[] = []
  const arrived: Array<{ headers: IncomingHttpHeaders, body: string }> = []
  const server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => { body += chunk })
    request.on('end', () => {
      arrived.push({ headers: request.headers, body })
      held.push(response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    arrived,
    release: (status) => {
      for (const response of held.splice(0)) {
        response.statusCode = status
        response.end()
      }
    }
  }
}

t.test('SIGTERM with an attempt in flight: the process waits for it, records it, and exits 0', async (t) => {
  const env = envFor(t, { WEBHOOK_TIMEOUT_MS: '5000' })
  const receiver = await heldReceiver(t)
  let server = await startServer(t, env)
  const subscription = await subscribe(t, server, receiver.url)
  t.equal((await server.request('POST', '/plants', { body: plantJson(BIG + 3n, 'in flight') })).statusCode, 200)
  await retryUntil(async () => receiver.arrived.length, (n) => n >= 1, 5000, 10)
  t.equal(receiver.arrived.length, 1, 'the attempt is in flight')

  const stopping = server.child
  stopping.kill('SIGTERM')
  await waitForLine(server.stdout, /shutting down/)
  await sleep(700)
  t.equal(stopping.exitCode, null, 'still running while the attempt is in flight')
  const released = Date.now()
  receiver.release(200)
  t.equal(await server.exited, 0, 'exit code 0')
  t.ok(Date.now() - released < 2000, `exited ${Date.now() - released} ms after the receiver answered`)
  t.same(server.stdout.filter((line) => /"level":(40|50|60)/.test(line)), [], 'no warning: the attempt was recorded')

  server = await startServer(t, env)
  const log = await deliveryLog(server, subscription.id)
  t.match(log, [{ id: String(receiver.arrived[0].headers['webhook-id']), status: 'delivered', attempts: 1, lastStatusCode: 200 }],
    'delivered, by the attempt the shutdown waited for')
  t.equal(log.length, 1)
  await sleep(1200)
  t.equal(receiver.arrived.length, 1, 'and not sent again after the restart')
  new Webhook(subscription.secret).verify(receiver.arrived[0].body, receiver.arrived[0].headers as Record<string, string>)
  t.equal(receiver.arrived[0].body, plantJson(BIG + 3n, 'in flight'), 'its body exact')
})
