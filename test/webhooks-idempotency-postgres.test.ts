import t from 'tap'
import { testApp } from './helpers/app.ts'
import { heldResolver, idempotencySuite, KEYED_ENV } from './helpers/idempotency-suite.ts'
import { postgresUnavailable, startPostgres } from './helpers/postgres-cluster.ts'
import { pgClient } from './helpers/postgres.ts'

// The Idempotency-Key of POST /webhooks on PostgreSQL: two instances on one database share
// the keys, a key being run on one answers 409 on the other, and each subscribe is one
// subscription whichever instances its retries reach.

t.test('on PostgreSQL, two instances on one database', { skip: postgresUnavailable() }, async (t) => {
  const server = await startPostgres(t)
  let databases = 0
  idempotencySuite(t, async (t) => {
    const url = await server.createDatabase(`keys_${++databases}`)
    const held = heldResolver()
    const env = { ...KEYED_ENV, DATABASE_URL: url, DATABASE_POOL_SIZE: '4' }
    const [a, b] = [await testApp(t, env, held.seams), await testApp(t, env, held.seams)]
    const client = await pgClient(t, url)
    return {
      a,
      b,
      held,
      age: async (hours) => {
        await client.query('UPDATE idempotency_keys SET created_at = created_at - $1 * interval \'1 hour\', leased_at = leased_at - $1 * interval \'1 hour\'', [hours])
      },
      keys: async () => (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_keys')).rows[0].n
    }
  })
})
