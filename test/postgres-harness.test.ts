import t from 'tap'
import { postgresUnavailable, startPostgres } from './helpers/postgres-cluster.ts'
import { pgClient } from './helpers/postgres.ts'

const BIG = '9223372036854775807' // 2^63 - 1: a double would round it to ...808

t.test('a throwaway PostgreSQL cluster', { skip: postgresUnavailable() }, async (t) => {
  const server = await startPostgres(t)
  t.match(server.url, /^postgres:\/\/[^:]+:[^@]+@127\.0\.0\.1:\d+\/postgres$/, 'a TCP URL on 127.0.0.1 with a password')

  const wrongPassword = new URL(server.url)
  wrongPassword.password = 'wrong'
  await t.rejects(pgClient(t, wrongPassword.href), { code: '28P01' }, 'the password is checked')

  const client = await pgClient(t, server.url)
  await client.query('CREATE TABLE numbers (id int PRIMARY KEY, n bigint NOT NULL)')
  await client.query('INSERT INTO numbers VALUES (1, $1), (2, $2)', [BIG, '9007199254740993'])
  const { rows } = await client.query('SELECT n, n - 1 AS below FROM numbers ORDER BY id')
  t.same(rows, [
    { n: BIG, below: '9223372036854775806' },
    { n: '9007199254740993', below: '9007199254740992' }
  ], 'bigints beyond 2^53 come back exactly, as strings')

  await server.stop()
  await t.rejects(client.query('SELECT 1'), 'a connection open across stop() fails')
  await t.rejects(pgClient(t, server.url), { code: 'ECONNREFUSED' }, 'a new connection is refused while stopped')

  await server.start()
  const again = await pgClient(t, server.url)
  t.same((await again.query('SELECT n FROM numbers WHERE id = 1')).rows, [{ n: BIG }], 'the data survives stop() and start()')

  const otherUrl = await server.createDatabase('isolated')
  t.equal(new URL(otherUrl).pathname, '/isolated')
  const other = await pgClient(t, otherUrl)
  t.same((await other.query("SELECT to_regclass('numbers') AS found")).rows, [{ found: null }], 'a new database is empty')
  await other.query('CREATE TABLE numbers (id int PRIMARY KEY, n bigint NOT NULL)')
  await other.query('INSERT INTO numbers VALUES (1, 42)')
  t.same((await again.query('SELECT n FROM numbers ORDER BY id')).rows, [{ n: BIG }, { n: '9007199254740993' }],
    'and independent of the first')
  await t.rejects(server.createDatabase('isolated'), { code: '42P04' }, 'a name is used once')
})
