import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import t from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { pgClient } from '../helpers/postgres.ts'
import { postgresRoutes } from '../helpers/postgres-routes.ts'
import { startReceiver, type Received } from '../helpers/receiver.ts'
import { logsArrived, startServer, type RunningServer } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'
import { deliveryLog, subscribe, webhookId } from '../helpers/webhook-client.ts'

// The webhook outbox on PostgreSQL, with several service instances on one database:
// claims are leased (FOR UPDATE SKIP LOCKED), so each delivery goes out from one
// instance at a time; an instance that dies mid-attempt is taken over once its lease
// expires; and a subscription deleted on one instance stops deliveries from all.

const BIG = 2n ** 53n

/** The exact JSON of a plant: what a create sends and what its announcement must carry, byte for byte. */
const plantJson = (id: bigint, name: string, tag?: string): string =>
  `{"id":${id},"name":${JSON.stringify(name)}${tag === undefined ? '' : `,"tag":${JSON.stringify(tag)}`}}`

/** The log lines of a process, parsed. */
const lines = (server: RunningServer): Array<Record<string, any>> => server.stdout.map((line) => JSON.parse(line))

// Both routes side by side: each has databases of its own on the file's one cluster.
t.jobs = 2
for (const route of postgresRoutes(t)) {
  t.test(`webhooks with several instances on one PostgreSQL, ${route.name}`, { skip: route.skip }, async (t) => {
    const database = await route.reach()
    // Two or three services, PostgreSQL and this test share few CPUs: the event loop can lag
    // past the overload guard's limit, whose 503s are not what this tests.
    const envFor = async (name: string, extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> => ({
      API_TOKENS: TOKEN,
      DATABASE_URL: await database.createDatabase(name),
      DATABASE_POOL_SIZE: '4',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      ...extra
    })
    // The instances A and B most subtests share, in order, each with a subscription of its
    // own that it deletes before the next one: debug, so that each instance logs each delivery
    // it made; fast retries that never give up.
    const env = await envFor('shared', { LOG_LEVEL: 'debug', WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_MAX_ATTEMPTS: '1000' })
    const servers = await Promise.all([1, 2].map(async () => await startServer(t, env)))
    let [a, b] = servers
    /** The lines about one subscription's deliveries that a process logged. */
    const about = (server: RunningServer, webhook: string, msg: string): Array<Record<string, any>> =>
      lines(server).filter((line) => line.webhook === webhook && line.msg === msg)

    t.test('200 creates over two instances: each plant delivered exactly once, signed, its id exact', async (t) => {
      const receiver = await startReceiver(t)
      // The other instance learns of it within a second, its next read of the subscriptions;
      // its creates announce the plant to it at once all the same.
      const subscription = await subscribe(t, a, receiver.url)

      const expected = new Map<string, string>()
      const plants = Array.from({ length: 200 }, (_, i) => {
        const id = i % 2 === 0 ? BIG + BigInt(i) : BigInt(i) * 1000n + 1n
        const body = plantJson(id, `plant "${i}" ✓`, i % 3 === 0 ? undefined : `tag ${i % 3}`)
        expected.set(String(id), body)
        return body
      })
      const codes: number[] = []
      // 16 clients, each on its own instance, one create after another.
      await Promise.all(Array.from({ length: 16 }, async (_, client) => {
        for (let i = client; i < plants.length; i += 16) {
          codes.push((await servers[i % 2].request('POST', '/plants', { body: plants[i] })).statusCode)
        }
      }))
      t.same(codes.filter((code) => code !== 200), [], 'all 200 created')

      await receiver.waitFor(200, 15_000)
      // Long enough for a duplicate to show: a claim by the other instance, which polls every second.
      await sleep(1200)
      const received = receiver.received
      const byId = new Map<string, Received[]>()
      for (const r of received) byId.set(webhookId(r), [...byId.get(webhookId(r)) ?? [], r])
      t.equal(received.length, 200, 'exactly 200 requests')
      t.equal(byId.size, 200, '200 distinct webhook-ids: none sent twice')
      t.same(received.filter((r) => r.status !== 200).length, 0, 'each acknowledged')
      t.same(new Set(received.map((r) => r.body)), new Set(expected.values()), 'each plant announced, its raw body exact (ids beyond 2^53 included)')
      t.same(received.filter((r) => { try { receiver.verify(subscription.secret, r); return false } catch { return true } }).length, 0,
        'each verifies with the secret')

      const log = await deliveryLog(b, subscription.id)
      t.equal(log.length, 200, 'the log holds 200 deliveries')
      t.same(log.filter((d) => d.status !== 'delivered' || d.attempts !== 1 || d.lastStatusCode !== 200), [], 'each delivered at the first attempt')
      t.same(new Set(log.map((d) => d.plantId)), new Set(expected.keys()), 'the log names each plant, its id exact')
      t.same(new Set(log.map((d) => d.id)), new Set(byId.keys()), 'the log ids are the webhook-ids sent')
      // Both are PostgreSQL's now(); the id keeps its milliseconds, the log's createdAt rounds its microseconds.
      t.same(log.filter((d) => Math.abs(parseInt(d.id.slice(4, 16), 16) - Date.parse(d.createdAt)) > 1), [], 'each id begins with its creation time in ms')

      await Promise.all([a, b].map(logsArrived))
      const deliveredBy = [a, b].map((server) => about(server, subscription.id, 'webhook delivered').map((line) => line.delivery))
      t.equal(deliveredBy[0].length + deliveredBy[1].length, 200, `the instances made 200 attempts between them (${deliveredBy[0].length} + ${deliveredBy[1].length})`)
      t.equal(new Set(deliveredBy.flat()).size, 200, 'no delivery attempted by both')
      t.equal((await b.request('DELETE', `/webhooks/${subscription.id}`)).statusCode, 204)
    })

    t.test('an instance killed mid-attempt is taken over by another once its lease expires, under the same webhook-id', async (t) => {
      // Instances of their own, on a database of their own. A lease of 3 × 1000 + 1000 ms.
      const env = await envFor('takeover', { WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_RETRY_BASE_MS: '100' })
      const receiver = await startReceiver(t, () => 'hang')
      const a = await startServer(t, env)
      const subscription = await subscribe(t, a, receiver.url)
      const body = plantJson(BIG * 3n + 5n, 'taken over')
      t.equal((await a.request('POST', '/plants', { body })).statusCode, 200)
      await receiver.waitFor(1, 5000)
      const attempted = Date.now()
      // B starts as A dies, well within A's lease: it must leave the delivery alone until the lease expires.
      // (Started before, it could claim the delivery first, on a poll that came between A's commit and A's claim.)
      const starting = startServer(t, env)
      a.child.kill('SIGKILL')
      t.equal(await a.exited, null, 'A killed while its attempt was in flight')
      receiver.answer(() => 200)
      const b = await starting
      const started = Date.now() - attempted
      await receiver.waitFor(2, 10_000)
      const gap = Date.now() - attempted
      t.ok(gap >= 3500, `B attempted ${gap} ms after A did (B listening after ${started} ms): not before the lease expired`)
      t.ok(gap < 2 * Math.max(started, 4000), 'but soon after it did, or after B started: not a lease later')
      const [first, second] = receiver.received
      t.equal(webhookId(second), webhookId(first), 'the same webhook-id')
      t.equal(second.body, body, 'the same body, exact')
      t.equal(second.status, 200)
      receiver.verify(subscription.secret, second)

      const { value: log } = await retryUntil(async () => await deliveryLog(b, subscription.id), (log) => log[0]?.status === 'delivered', 5000, 50)
      t.match(log, [{ id: webhookId(first), status: 'delivered', lastStatusCode: 200, plantId: String(BIG * 3n + 5n) }],
        `the log says delivered (attempts: ${log[0]?.attempts}; A's was never recorded)`)
      t.equal(log.length, 1)
      await sleep(500)
      t.equal(receiver.received.length, 2, 'not sent again')
    })

    t.test('an instance shut down gracefully hands back what it claimed ahead: another delivers it at once, not after the lease', async (t) => {
      // One attempt at a time and one claimed ahead; a lease of 3 × 20 s + 1 s, far beyond the wait below.
      const env = await envFor('handback', {
        WEBHOOK_CONCURRENCY: '1', WEBHOOK_TIMEOUT_MS: '20000', WEBHOOK_RETRY_BASE_MS: '20', SHUTDOWN_GRACE_MS: '2000'
      })
      const receiver = await startReceiver(t, () => 'hang')
      const a = await startServer(t, env)
      const subscription = await subscribe(t, a, receiver.url)
      for (let i = 0; i < 3; i++) {
        t.equal((await a.request('POST', '/plants', { body: plantJson(BIG * 11n + BigInt(i), `handed back ${i}`) })).statusCode, 200)
      }
      await receiver.waitFor(1, 5000)
      // The attempt in flight and the one claimed ahead hold leases.
      const observer = await pgClient(t, database.direct(env.DATABASE_URL!))
      const claimed = async (): Promise<number> => Number((await observer.query('SELECT count(*) AS n FROM webhook_deliveries WHERE lease IS NOT NULL')).rows[0].n)
      t.equal((await retryUntil(claimed, (n) => n === 2, 5000, 20)).value, 2, 'one attempt in flight, one claimed ahead')
      a.child.kill('SIGTERM')
      t.equal(await a.exited, 0, 'A shut down gracefully, its attempt in flight cut off')
      receiver.answer(() => 200)
      const b = await startServer(t, env)
      const { value: log } = await retryUntil(async () => await deliveryLog(b, subscription.id),
        (log) => log.length === 3 && log.every((d) => d.status === 'delivered'), 5000, 50)
      t.same(log.map((d) => d.status), ['delivered', 'delivered', 'delivered'], 'B delivered all three within 5 s')
      t.equal((await b.request('DELETE', `/webhooks/${subscription.id}`)).statusCode, 204)
    })

    t.test('a subscription deleted on one instance stops deliveries from both', async (t) => {
      // An instance that wakes first for its own retries claims the other's too as they come
      // due, and may end up holding them all. Here each holds at most two (one attempt in flight,
      // one claimed ahead), so that of six failing deliveries both must attempt some.
      const env = await envFor('deleted', {
        LOG_LEVEL: 'debug', WEBHOOK_CONCURRENCY: '1', WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_MAX_ATTEMPTS: '1000'
      })
      const [a, b] = await Promise.all([1, 2].map(async () => await startServer(t, env)))
      const receiver = await startReceiver(t, () => 500)
      const subscription = await subscribe(t, a, receiver.url)
      // Once B knows of it too (it reads the subscriptions every second), each instance claims what it creates.
      await sleep(1100)
      for (let i = 0; i < 6; i++) {
        t.equal((await [a, b][i % 2].request('POST', '/plants', { body: plantJson(BIG * 7n + BigInt(i), `failing ${i}`) })).statusCode, 200)
      }
      const failures = (server: RunningServer): number => about(server, subscription.id, 'webhook attempt failed; retrying').length
      const { value: counts } = await retryUntil(async () => [failures(a), failures(b), receiver.received.length],
        ([fromA, fromB, total]) => fromA >= 2 && fromB >= 2 && total >= 30, 10_000, 20)
      t.ok(counts[0] >= 2 && counts[1] >= 2, `both instances attempting: ${counts[0]} and ${counts[1]} failed attempts`)

      t.equal((await a.request('DELETE', `/webhooks/${subscription.id}`)).statusCode, 204, 'deleted on A')
      // Attempts already in flight finish at once: the receiver answers 500 without waiting.
      await sleep(300)
      const stopped = [failures(a), failures(b), receiver.received.length]
      await sleep(1500)
      t.same([failures(a), failures(b), receiver.received.length], stopped,
        `no attempt since, from either instance (${stopped[2]} requests in all)`)
      t.equal((await b.request('GET', `/webhooks/${subscription.id}`)).statusCode, 404, 'gone on B')
      t.equal((await b.request('GET', `/webhooks/${subscription.id}/deliveries`)).statusCode, 404, 'its delivery log with it')
      t.same([...lines(a), ...lines(b)].filter((line) => line.level >= 50), [], 'no error logged')
    })

    // A create's statement reads the subscriptions as of its start: a DELETE committed while
    // it runs neither sees the deliveries it is writing nor stops them being written. Such a
    // delivery has no subscription: never claimed, and, pending, never pruned either; yet the
    // pending gauge counts it for ever. The interleaving is made certain here by holding the
    // create on a row lock: a transaction of the test's own inserts the same plant id first.
    t.test('a create racing a DELETE on another instance leaves no delivery pending behind', async (t) => {
      const receiver = await startReceiver(t, () => 500)
      const subscription = await subscribe(t, a, receiver.url)
      const sql = async (): Promise<pg.Client> => {
        const client = new pg.Client({ connectionString: database.direct(env.DATABASE_URL!) })
        client.on('error', () => {})
        await client.connect()
        t.teardown(async () => await client.end().catch(() => {}))
        return client
      }
      const [blocker, observer] = [await sql(), await sql()]
      const id = BIG * 5n + 1n
      await blocker.query('BEGIN')
      await blocker.query('INSERT INTO plants (id, name) VALUES ($1, $2)', [String(id), Buffer.from('blocker')])

      // B's create starts, takes its snapshot (the subscription in it) and waits for the blocker's row.
      const creating = b.request('POST', '/plants', { body: plantJson(id, 'raced') })
      const { value: waiting } = await retryUntil(async () => Number((await observer.query(`SELECT count(*) AS n FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO plants%'`)).rows[0].n), (n) => n === 1, 5000, 20)
      t.equal(waiting, 1, "B's create is waiting on the row lock")
      t.equal((await a.request('DELETE', `/webhooks/${subscription.id}`)).statusCode, 204, 'deleted on A meanwhile')
      await blocker.query('ROLLBACK')
      t.equal((await creating).statusCode, 200, "then B's create goes through")

      t.same((await b.request('GET', '/webhooks')).json(), [], 'no subscription left')
      const pending = async (server: RunningServer): Promise<number> =>
        Number(/^plant_store_webhook_deliveries_pending (\d+)$/m.exec((await server.request('GET', '/metrics')).body)?.[1])
      t.equal(await pending(a), 0, 'no delivery pending: there is no subscription to deliver to')

      // An instance sweeps the deliveries of deleted subscriptions as it starts (and after a
      // DELETE, which here may run before the create commits): what nothing can ever deliver goes.
      await subscribe(t, a, receiver.url)
      b.child.kill('SIGTERM')
      t.equal(await b.exited, 0)
      b = await startServer(t, env)
      const orphans = async (): Promise<number> => Number((await observer.query(`SELECT count(*) AS n FROM webhook_deliveries
        WHERE NOT EXISTS (SELECT 1 FROM webhooks WHERE webhooks.id = webhook_deliveries.webhook_id)`)).rows[0].n)
      const { value: left } = await retryUntil(orphans, (n) => n === 0, 1000, 50)
      t.equal(left, 0, 'no delivery left whose subscription is gone')
      t.equal(receiver.received.length, 0, 'and nothing was sent for it')
    })
  })
}
