import t from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { pgClient } from '../helpers/postgres.ts'
import { serviceHoldingPlant } from '../helpers/postgres-failing.ts'
import { postgresRoutes, type Route } from '../helpers/postgres-routes.ts'
import { failedStart, startServer, waitForLine } from '../helpers/server.ts'

// What a transaction-mode pooler takes away, tried directly and through PgBouncer with its
// defaults: no session setting holds from one transaction to the next, and the pooler
// refuses what it does not know. The statement timeout, set in each transaction, still
// cancels a slow statement; settings refused stop the start, or are logged as such.

const [direct, pooled] = postgresRoutes(t)

// Directly and by default, postgres-outage.test.ts tries the same lock.
const sessions: Array<{ name: string, route: Route, env: Record<string, string> }> = [
  { name: 'through PgBouncer', route: pooled, env: {} },
  { name: 'directly, DATABASE_PREPARED_STATEMENTS=true', route: direct, env: { DATABASE_PREPARED_STATEMENTS: 'true' } }
]
for (const { name, route, env } of sessions) {
  t.test(`${name}: a write waiting on a lock is cancelled by the server at the statement timeout, 503 to writes, reads served, nothing left waiting`, { skip: route.skip }, async (t) => {
    const database = await route.reach()
    const url = await database.createDatabase('timeout')
    const service = await serviceHoldingPlant(t, url, env)
    const admin = await pgClient(t, database.direct(url))
    await admin.query('BEGIN')
    // As CREATE INDEX locks it: reads go on, writes wait.
    await admin.query('LOCK TABLE plants IN SHARE MODE')
    t.equal((await service.request('POST', '/plants', { body: { id: 2, name: 'p2' } })).statusCode, 503)
    const outage = JSON.parse(await waitForLine(service.stdout, /store takes no writes/))
    t.equal(outage.err.code, '57014', 'cancelled by the server (not by the driver, whose wait is longer)')
    t.equal((await service.request('GET', '/plants/1')).statusCode, 200, 'reads served meanwhile')
    const { rows } = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
    t.equal(rows[0].n, 0, 'no statement left waiting on the lock')
    await admin.query('COMMIT')
  })
}

t.test('settings a pooler refuses: at the first attempt the start stops, in one line naming DATABASE_URL; later, a configuration error is logged', { skip: pooled.skip }, async (t) => {
  const database = await pooled.reach()
  const url = await database.createDatabase('refused')
  const withOptions = new URL(url)
  withOptions.searchParams.set('options', '-c search_path=public')
  const { code, stderr } = await failedStart({ API_TOKENS: TOKEN, DATABASE_URL: withOptions.href })
  t.equal(code, 1)
  t.match(stderr, /^plant-store: cannot start: DATABASE_URL postgres:\/\/127\.0\.0\.1:\d+\/refused_pooled cannot be used: .*\(unsupported startup parameter: options, 08P01\): check the user, password, database name and parameters of DATABASE_URL, and the settings of a pooler/)
  t.equal(stderr.split('\n').length, 2, 'one line')
  const prepared = await failedStart({ API_TOKENS: TOKEN, DATABASE_URL: url, DATABASE_PREPARED_STATEMENTS: 'true' })
  t.match(prepared.stderr, /\(unsupported startup parameter: statement_timeout, 08P01\): check .*; DATABASE_PREPARED_STATEMENTS=true sends the statement timeout as a startup parameter, for a direct connection only\n$/,
    'DATABASE_PREPARED_STATEMENTS named when it is the cause')

  // PgBouncer down at the first attempt (an outage: retried), then refusing the password.
  const wrongPassword = new URL(url)
  wrongPassword.password = 'wrong'
  await database.stop()
  const service = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: wrongPassword.href })
  t.match(JSON.parse(await waitForLine(service.stdout, /cannot start yet/)), { level: 40, err: { code: 'ECONNREFUSED' } })
  await database.start()
  t.match(JSON.parse(await waitForLine(service.stdout, /configuration error/, 10_000)), {
    level: 50,
    msg: /^the PostgreSQL store cannot start: a configuration error \(check the user, password, database name and parameters of DATABASE_URL/,
    err: { message: 'SASL authentication failed' }
  }, 'logged as a setting to fix, with its cause')
  t.equal((await service.request('GET', '/plants/1')).statusCode, 503, 'answering 503 meanwhile')
})

t.test('PgBouncer with fewer client slots (max_client_conn) than the pool: the connections open serve every request', { skip: pooled.skip }, async (t) => {
  const database = await pooled.reach()
  const service = await serviceHoldingPlant(t, await database.createDatabase('few_slots'), { MAX_EVENT_LOOP_DELAY_MS: '0' })
  const { bouncer } = database
  await bouncer!.admin('SET max_client_conn = 3')
  t.teardown(async () => { await bouncer!.admin('SET max_client_conn = 100') })
  // Rounds of 40 requests at once, more than the pool's 10 connections: it tries to open more.
  const codes: number[] = []
  for (let round = 0; round < 5; round++) {
    codes.push(...await Promise.all(Array.from({ length: 40 }, async (_, i) => i % 4 === 0
      ? (await service.request('POST', '/plants', { body: { id: 100 + round * 40 + i, name: 'more' } })).statusCode
      : (await service.request('GET', '/plants/1')).statusCode)))
  }
  t.same(codes.filter((code) => code !== 200), [], `${codes.length} requests, each a 200`)
  t.match(JSON.parse(await waitForLine(service.stdout, /no slot for another connection/)).err, { message: /^no more connections allowed/ }, 'the pool kept to the connections open')
})
