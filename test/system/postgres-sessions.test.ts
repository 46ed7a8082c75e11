import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { AUTH, assertError, postPlant } from '../helpers/app.ts'
import { postgresUnavailable, startPostgres } from '../helpers/postgres-cluster.ts'
import { pgClient } from '../helpers/postgres.ts'
import { appBehindRelay } from '../helpers/postgres-relay.ts'
import { endIdleSessions, plantsLocked, serviceEndedWhenIdle, SERVICE_SESSION } from '../helpers/postgres-failing.ts'
import { errorLines, logsArrived } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'

t.test('PostgreSQL sessions ended under the service, and a pool used up', { skip: postgresUnavailable() }, async (t) => {
  const server = await startPostgres(t)
  // Each on a database of its own, side by side.
  t.jobs = 5

  t.test('a statement sent just as the server ends its connection for being idle runs again on another: every request served', async (t) => {
    // Sessions end after 40 ms idle, and reads come about that far apart: some are sent
    // on a connection the server is ending at that moment (SQLSTATE 57P05).
    const { service } = await serviceEndedWhenIdle(t, server, 'idle_race', 40)
    const statuses: number[] = []
    for (let read = 0; read < 200; read++) {
      statuses.push((await service.request('GET', '/plants/1')).statusCode)
      await sleep(35 + Math.random() * 10)
    }
    t.same(statuses.filter((status) => status !== 200), [], 'every read answered 200')
    await logsArrived(service)
    t.same(errorLines(service.stdout), [], 'no outage, nothing else went wrong')
  })

  t.test('a new connection ended at its start, before a statement was sent on it: the statement runs on another, every request served, the store never down', async (t) => {
    const { app, relay } = await appBehindRelay(t, await server.createDatabase('ended_at_start'))
    t.equal((await postPlant(app, { id: 1, name: 'p1' })).statusCode, 200, 'plant 1 created')
    // Eight reads at once open new connections; the first two of those are ended as they
    // start: node-postgres hands each out, then refuses the statement unsent.
    relay.endAtStart(2)
    const reads = await Promise.all(Array.from({ length: 8 }, async () => await app.inject({ url: '/plants/1', headers: AUTH })))
    t.same(reads.map((res) => res.statusCode), reads.map(() => 200), 'every read answered 200')
    t.equal((await app.inject({ url: '/health/ready' })).statusCode, 200, 'the store never down')
  })

  t.test('connections the server closes while idle (idle_session_timeout, pg_terminate_backend): replaced, every request served, the store never down', async (t) => {
    // Sessions the service opens are closed by the server after 300 ms idle.
    const { admin, service } = await serviceEndedWhenIdle(t, server, 'idle_closed', 300)

    // Twenty reads at once open several connections; between bursts the server closes
    // them, by its idle timeout or by an administrator.
    const statuses: number[] = []
    const burst = async (): Promise<void> => {
      const reads = await Promise.all(Array.from({ length: 20 }, async () => await service.request('GET', '/plants/1')))
      statuses.push(...reads.map((res) => res.statusCode))
    }
    for (let round = 0; round < 3; round++) {
      await burst()
      await sleep(500)
    }
    const terminated = new Set<number>()
    for (let round = 0; round < 3; round++) {
      await burst()
      for (const pid of await endIdleSessions(admin)) terminated.add(pid)
      await sleep(100)
    }
    await burst()
    t.equal(statuses.length, 140)
    t.same(statuses.filter((status) => status !== 200), [], 'every read answered 200')
    await logsArrived(service)
    const closed = service.stdout.filter((line) => line.includes('a PostgreSQL connection was closed'))
    t.ok(closed.some((line) => line.includes('idle-session timeout')), 'connections closed by the idle timeout')
    t.equal(closed.filter((line) => line.includes('administrator command')).length, terminated.size, `each of the ${terminated.size} sessions terminated logged once`)
    t.same(errorLines(service.stdout), [], 'no outage, nothing else went wrong')
  })

  t.test('a statement whose connection an administrator ends (pg_terminate_backend) while it runs: 503 to it alone, the store never down', async (t) => {
    const { url, service, unlock } = await plantsLocked(t, server, 'terminated', 'ACCESS EXCLUSIVE')
    // Not the locking transaction's connection: pg_stat_activity stays as a transaction first read it.
    const admin = await pgClient(t, url)
    // A read that waits on the lock: its session is active, running it.
    const waiting = service.request('GET', '/plants/1')
    const { value: ended } = await retryUntil(async () => (await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = 'terminated' AND ${SERVICE_SESSION} AND state = 'active' AND wait_event_type = 'Lock'`)).rows,
    (rows) => rows.length === 1, 5000)
    await admin.query('SELECT pg_terminate_backend($1)', [ended[0].pid])
    assertError(t, await waiting, 503, 'store_unavailable')
    await unlock()
    const after = await Promise.all(Array.from({ length: 10 }, async () => await service.request('GET', '/plants/1')))
    t.same(after.map((res) => res.statusCode), Array(10).fill(200), 'the reads right after it are served: the store is not down')
    await logsArrived(service)
    t.same(errorLines(service.stdout), [], 'no outage')
    t.equal(service.stdout.filter((line) => line.includes('a PostgreSQL connection was closed') && line.includes('administrator command')).length, 1, 'the connection ended, logged once')
  })

  t.test('every pooled connection in use past the pool\'s 2 s wait: what waited answers 503 store_busy, the store never down', async (t) => {
    const { url, service, unlock } = await plantsLocked(t, server, 'pool_busy', 'ACCESS EXCLUSIVE', { DATABASE_POOL_SIZE: '2' })
    const admin = await pgClient(t, url)
    // Two reads wait on the lock, one on each of the pool's connections, within the
    // server's 3 s statement timeout; three more wait for a connection.
    const holding = [service.request('GET', '/plants/1'), service.request('GET', '/plants/1')]
    await retryUntil(async () => (await admin.query<{ waiting: number }>(
      `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = 'pool_busy' AND ${SERVICE_SESSION} AND wait_event_type = 'Lock'`)).rows[0].waiting,
    (waiting) => waiting === 2, 5000)
    const waited = await Promise.all(Array.from({ length: 3 }, async () => await service.request('GET', '/plants/1')))
    await unlock()
    for (const res of waited) {
      t.match(assertError(t, res, 503, 'store_busy'), /too many requests are waiting/)
      t.equal(res.headers['retry-after'], '1')
    }
    t.same((await Promise.all(holding)).map((res) => res.statusCode), [200, 200], 'the reads holding the connections are served once the lock is released')
    const after = await Promise.all(Array.from({ length: 10 }, async () => (await service.request('GET', '/plants/1')).statusCode))
    t.same(after, Array(10).fill(200), 'the reads right after are served: the store is not down')
    t.equal((await service.request('GET', '/health/ready')).statusCode, 200, 'ready')
    await logsArrived(service)
    t.same(errorLines(service.stdout), [], 'no outage')
    t.equal(service.stdout.filter((line) => line.includes('every PostgreSQL connection of the pool stayed in use')).length, 1, 'logged once, at warn')
  })
})
