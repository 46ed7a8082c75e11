import t from 'tap'
import { postgresUnavailable, startPostgres } from './helpers/postgres-cluster.ts'
import { outboxSuite } from './helpers/outbox-suite.ts'
import { storeSuite } from './helpers/store-suite.ts'

t.test('the store suite on PostgreSQL', { skip: postgresUnavailable() }, async (t) => {
  const server = await startPostgres(t)
  let databases = 0
  storeSuite(t, async () => await server.createDatabase(`suite_${++databases}`))
  outboxSuite(t, async () => await server.createDatabase(`suite_${++databases}`))
})
