import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { ackedPlantsSurvive } from '../helpers/acked-writes.ts'
import { pgClient } from '../helpers/postgres.ts'
import { POOL_SIZE, postgresRoutes } from '../helpers/postgres-routes.ts'
import { errorLines, logsArrived, startServer, waitForLine, type RunningServer } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'

const UNAVAILABLE = '{"error":503,"message":"the plant store is unavailable right now; retry after the delay in Retry-After","code":"store_unavailable"}'
const INSTANCE_POOL = 4
const LOAD_MS = 2000

const create = async (server: RunningServer, plant: object): Promise<number> =>
  (await server.request('POST', '/plants', { body: plant })).statusCode

const logged = (server: RunningServer, text: string): string[] => server.stdout.filter((line) => line.includes(text))

// The subtests run in order, on the same three processes: each starts where the last ended.
// Through PgBouncer, what goes down and comes back is PgBouncer.
for (const route of postgresRoutes(t)) {
  t.test(`three service instances on one PostgreSQL, ${route.name}`, { skip: route.skip }, async (t) => {
    const database = await route.reach()
    const url = await database.createDatabase('shared')
    await database.stop()
    // Three services, PostgreSQL and this test share few CPUs: the event loop can lag past
    // the overload guard's limit, whose 503s are not what this tests.
    const env = { API_TOKENS: TOKEN, DATABASE_URL: url, DATABASE_POOL_SIZE: String(INSTANCE_POOL), MAX_EVENT_LOOP_DELAY_MS: '0' }
    const servers = await Promise.all([1, 2, 3].map(async () => await startServer(t, env)))
    const at = (i: number): RunningServer => servers[i % servers.length]

    t.test('started while PostgreSQL is down: they listen, answer 503, and serve once it is up', async (t) => {
      t.equal(new Set(servers.map((server) => server.url)).size, 3, 'three instances, three ports')
      for (const [i, [method, path, body]] of [['POST', '/plants', '{"id":1,"name":"early"}'], ['GET', '/plants/1'], ['GET', '/plants']].entries()) {
        const res = await at(i).request(method, path, { body })
        t.same([res.statusCode, res.body], [503, UNAVAILABLE], `${method} ${path}`)
      }
      t.equal((await at(0).request('GET', '/health/ready')).statusCode, 503, 'not ready')
      for (const server of servers) {
        t.match(JSON.parse(await waitForLine(server.stdout, /cannot start yet/)),
          { level: 40, attempt: Number, retryInMs: Number, err: { code: 'ECONNREFUSED' } }, 'each attempt a warning with its cause')
      }

      await database.start()
      const codes = await Promise.all(servers.map(async (server, i) =>
        (await retryUntil(async () => await create(server, { id: i, name: 'early' }), (code) => code === 200, 10_000)).value))
      t.same(codes, [200, 200, 200], 'each connected and migrated within the backoff cap')
      await Promise.all(servers.map(logsArrived))
      for (const server of servers) t.equal(logged(server, 'store is available: connected and migrated').length, 1)
      t.same(await Promise.all(servers.map(async (server) => (await server.request('GET', '/health/ready')).statusCode)), [200, 200, 200], 'ready')
    })

    t.test('creates of one id racing across instances: one 200, the rest 409; the winner retried anywhere is a 200', async (t) => {
      const racers = Array.from({ length: 30 }, (_, i) => ({ id: 7, name: `racer ${i}` }))
      const codes = await Promise.all(racers.map(async (plant, i) => await create(at(i), plant)))
      t.equal(codes.filter((c) => c === 200).length, 1, 'one winner')
      t.equal(codes.filter((c) => c === 409).length, 29, 'every other one a conflict')
      const winner = racers[codes.indexOf(200)]
      t.same(await Promise.all(servers.map(async (server) => await create(server, winner))), [200, 200, 200])
    })

    t.test('the same ids created on every instance at once, in different orders: each created exactly once', async (t) => {
      const ids = Array.from({ length: 300 }, (_, i) => 1000 + i)
      const orders = [ids, ids.toReversed(), ids.filter((id) => id % 2 === 0).concat(ids.filter((id) => id % 2 === 1))]
      const codes = (await Promise.all(orders.map(async (order, i) =>
        await Promise.all(order.map(async (id) => [id, await create(servers[i], { id, name: `from ${i}` })] as const))))).flat()
      t.same(codes.filter(([, code]) => code !== 200 && code !== 409), [], 'each a 200 or a 409')
      t.same(codes.filter(([, code]) => code === 200).map(([id]) => id).sort((a, b) => a - b), ids, 'every id created once')
    })

    t.test('a plant created on one instance is read, listed and deleted on another, ids exact beyond 2^53', async (t) => {
      t.equal((await at(0).request('POST', '/plants', { body: '{"id":9007199254740993,"name":"big","tag":"far"}' })).statusCode, 200)
      t.equal((await at(1).request('POST', '/plants', { body: '{"id":9007199254740992,"name":"near","tag":"far"}' })).statusCode, 200)
      t.equal((await at(2).request('POST', '/plants', { body: '{"id":9007199254740993,"name":"big","tag":"far"}' })).statusCode, 200, 'a retry on a third instance')
      t.equal((await at(2).request('POST', '/plants', { body: '{"id":9007199254740993,"name":"near","tag":"far"}' })).statusCode, 409)
      t.equal((await at(1).request('GET', '/plants/9007199254740993')).body, '{"id":9007199254740993,"name":"big","tag":"far"}')
      t.equal((await at(2).request('GET', '/plants?tag=far')).body,
        '[{"id":9007199254740992,"name":"near","tag":"far"},{"id":9007199254740993,"name":"big","tag":"far"}]')
      t.equal((await at(1).request('DELETE', '/plants/9007199254740993')).statusCode, 204)
      t.equal((await at(0).request('GET', '/plants/9007199254740993')).statusCode, 404, 'gone everywhere')
      t.equal((await at(2).request('DELETE', '/plants/9007199254740993')).statusCode, 404)
      t.equal((await at(0).request('GET', '/plants/9007199254740992')).body, '{"id":9007199254740992,"name":"near","tag":"far"}', 'its neighbour kept')
    })

    t.test('PostgreSQL lost while running: 503 at once, logged once with its cause, served again without a restart', async (t) => {
      await database.stop()
      for (const [i, [method, path, body]] of [['POST', '/plants', '{"id":50,"name":"lost"}'], ['GET', '/plants/1'], ['GET', '/plants'], ['DELETE', '/plants/1']].entries()) {
        const res = await at(i).request(method, path, { body })
        t.same([res.statusCode, res.body], [503, UNAVAILABLE], `${method} ${path}`)
        t.ok(res.ms < 5000, `answered in ${Math.round(res.ms)} ms`)
      }
      await Promise.all(servers.map(logsArrived))
      for (const server of servers) {
        const outages = logged(server, 'store is unavailable;')
        t.equal(outages.length, 1, 'the outage is logged once')
        // The first statement to fail names it: on a connection the shutdown ended, refused
        // a new one, or asking for one while the server shuts down.
        t.match(JSON.parse(outages[0]), { level: 50, err: { message: /terminating connection|ECONNREFUSED|the database system is shutting down|Connection terminated/ } }, 'with its cause')
      }
      t.equal((await at(1).request('GET', '/health/ready')).statusCode, 503, 'not ready')

      await database.start()
      // Each instance serves again once its probe finds the database answering: within a second or so.
      for (const server of servers) {
        const { value, ms } = await retryUntil(async () => await server.request('GET', '/plants/1'), (res) => res.statusCode === 200, 5000)
        t.equal(value.body, '{"id":1,"name":"early"}', `served again after ${ms} ms, the plant kept`)
      }
      t.equal((await at(1).request('GET', '/plants/50')).statusCode, 404, 'the create answered 503 was not stored')
      t.equal((await at(2).request('GET', '/plants/1')).statusCode, 200)
      t.equal((await at(1).request('GET', '/health/ready')).statusCode, 200, 'ready again')
      for (const server of servers) {
        await waitForLine(server.stdout, /store is available again/)
        await logsArrived(server)
        t.equal(logged(server, 'store is available again').length, 1, 'the recovery is logged once')
        t.equal(server.child.exitCode, null, 'the process kept running throughout')
        t.same(errorLines(server.stdout).filter((line) => !line.includes('store is unavailable;')), [], 'nothing else went wrong')
      }
    })

    t.test('under load: every create a 200, the table holds exactly those, and PostgreSQL never more connections than the pool', async (t) => {
      const admin = await pgClient(t, database.direct(url))
      const pool = database.bouncer === undefined ? servers.length * INSTANCE_POOL : POOL_SIZE
      const until = Date.now() + LOAD_MS
      // The service's sessions on its database, every 10 ms while the load lasts.
      let most = 0
      const sampler = (async () => {
        while (Date.now() < until) {
          const { rows } = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')
          most = Math.max(most, rows[0].n)
          await sleep(10)
        }
      })()
      const acked: number[] = []
      const refused: string[] = []
      await Promise.all(Array.from({ length: 24 }, async (_, client) => {
        for (let id = 5_000_000 + client * 100_000; Date.now() < until; id++) {
          const res = await at(client).request('POST', '/plants', { body: { id, name: `load ${id}` } })
          if (res.statusCode === 200) acked.push(id)
          else refused.push(`${res.statusCode} ${res.body}`)
        }
      }))
      await sampler
      t.same(refused, [], `all ${acked.length} creates answered 200`)
      const { rows } = await admin.query<{ id: string }>('SELECT id FROM plants WHERE id BETWEEN 5000000 AND 7500000 ORDER BY id')
      t.same(rows.map((row) => Number(row.id)), acked.sort((a, b) => a - b), 'the table holds exactly the plants answered 200')
      t.ok(most > 0 && most <= pool, `at most ${most} connections on PostgreSQL during the load, the pool being ${pool}`)
    })

    t.test('PgBouncer paused: 503 while it lasts, served again once resumed, without a restart', { skip: database.bouncer === undefined && 'no PgBouncer on this route' }, async (t) => {
      await database.bouncer!.admin('PAUSE')
      for (const server of servers) {
        const res = await server.request('GET', '/plants/1')
        t.same([res.statusCode, res.body], [503, UNAVAILABLE], 'a 503 once its statement timed out in the driver')
      }
      await database.bouncer!.admin('RESUME')
      for (const server of servers) {
        const { value, ms } = await retryUntil(async () => await server.request('GET', '/plants/1'), (res) => res.statusCode === 200, 5000)
        t.equal(value.body, '{"id":1,"name":"early"}', `served again after ${ms} ms`)
      }
    })

    t.test('acknowledged plants survive instances killed mid-stream and a restart of what they connect to', async (t) => {
      await ackedPlantsSurvive(t, servers, {
        clients: 24,
        ackedBefore: 600,
        signal: 'SIGKILL',
        restart: async () => {
          await database.stop()
          await database.start()
          return await startServer(t, env)
        }
      })
    })
  })
}
