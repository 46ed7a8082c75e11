import t from 'tap'
import { MAX_SUBSCRIPTIONS } from '../../schemas/index.ts'
import { TOKEN } from '../helpers/app.ts'
import { POOL_SIZE, postgresRoutes } from '../helpers/postgres-routes.ts'
import { pgClient } from '../helpers/postgres.ts'
import { startServer } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'

// Subscribes take turns under an advisory lock, on every instance: one statement counting
// and inserting made 23 subscriptions from 60 requests at once on one instance. The test's
// lock on the table holds the subscribes until many wait, then lets them all go together.

const REQUESTS = 60

for (const route of postgresRoutes(t)) {
  t.test(`concurrent subscribes on two instances ${route.name} never pass the limit of ${MAX_SUBSCRIPTIONS}`, { skip: route.skip }, async (t) => {
    const database = await route.reach()
    const env = {
      API_TOKENS: TOKEN,
      DATABASE_URL: await database.createDatabase('limit'),
      DATABASE_POOL_SIZE: '10',
      // Two services, PostgreSQL and this test share few CPUs: the overload guard's 503s are not what this tests.
      MAX_EVENT_LOOP_DELAY_MS: '0',
      WEBHOOK_ALLOW_PRIVATE: 'true'
    }
    const [a, b] = await Promise.all([1, 2].map(async () => await startServer(t, env)))
    const locker = await pgClient(t, database.direct(env.DATABASE_URL))
    await locker.query('BEGIN; LOCK TABLE webhooks IN EXCLUSIVE MODE')
    const answering = Promise.all(Array.from({ length: REQUESTS }, async (_, i) =>
      await (i % 2 === 0 ? a : b).request('POST', '/webhooks', { body: { url: `http://127.0.0.1:9/${i}` } })))
    const waiting = async (): Promise<number> => (await locker.query('SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted')).rows[0].n
    // Through PgBouncer, no more than its server pool can wait on PostgreSQL; the rest wait in PgBouncer.
    await retryUntil(waiting, (n) => n >= (database.bouncer === undefined ? 15 : POOL_SIZE), 1000, 10)
    await locker.query('COMMIT')

    const codes = (await answering).map((answer) => answer.statusCode === 409 ? answer.json().code : answer.statusCode)
    t.equal(codes.filter((code) => code === 201).length, MAX_SUBSCRIPTIONS, `${MAX_SUBSCRIPTIONS} created`)
    t.equal(codes.filter((code) => code === 'subscription_limit').length, REQUESTS - MAX_SUBSCRIPTIONS,
      `the rest 409 subscription_limit (answers: ${[...new Set(codes)].join(', ')})`)
    for (const server of [a, b]) t.equal((await server.request('GET', '/webhooks')).json().length, MAX_SUBSCRIPTIONS, 'as many listed on each instance')
  })
}
