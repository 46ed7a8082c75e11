import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import t from 'tap'
import pino from 'pino'
import { PostgresStore } from '../src/store/postgres/store.ts'
import { inline, timed } from '../src/store/postgres/statement.ts'
import { postgresUnavailable, startPostgres } from './helpers/postgres-cluster.ts'
import { pgClient } from './helpers/postgres.ts'

// The store writes its values into the statement as literals: whatever they hold (quotes,
// backslashes, $1, any character PostgreSQL's text takes), PostgreSQL must read back exactly
// the values, however standard_conforming_strings is set.

const text = fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => s.replaceAll('\0', ''))
const tricky = fc.constantFrom("'", "''", '\\', "\\'", '$1', '"', '{', '}', ',', 'NULL', "'; SELECT 1; --", 'E\'\\x\'')
const value = fc.oneof(text, tricky, fc.array(fc.oneof(tricky, text)).map((parts) => parts.join('')))

t.test('values written in as literals come back exactly', { skip: postgresUnavailable() }, async (t) => {
  const client = await pgClient(t, (await startPostgres(t)).url)
  const statement = "SELECT $1::text AS one, $2::bytea AS bytes, $3::text[] AS list, $4::bigint AS id, '$1' AS quoted"
  for (const conforming of ['on', 'off']) {
    await client.query(`SET standard_conforming_strings = ${conforming}`)
    await fc.assert(fc.asyncProperty(value, fc.uint8Array({ maxLength: 20 }), fc.array(fc.option(value)), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
      async (one, bytes, list, id) => {
        const [, { rows }] = await client.query(timed(inline(statement, [one, Buffer.from(bytes), list, String(id)]), 1000)) as unknown as Array<{ rows: unknown[] }>
        return isDeepStrictEqual(rows, [{ one, bytes: Buffer.from(bytes), list, id: String(id), quoted: '$1' }])
      }), { numRuns: 200 })
    t.pass(`standard_conforming_strings ${conforming}: 200 rounds exact`)
  }
  t.throws(() => inline('SELECT $2', ['one']), { message: 'no value for $2' })
})

t.test('how the store sends a statement: by default one message, its timeout and its values in it; with preparedStatements, named, its values apart', { skip: postgresUnavailable() }, async (t) => {
  const server = await startPostgres(t)
  const context = { log: pino({ level: 'silent' }), maxBatch: 100, maxQueueBytes: 1 << 20, onBatch: () => {} }
  for (const [prepared, sent] of [[false, "SET LOCAL statement_timeout = 3000; SELECT id, name, tag FROM plants WHERE id = E'7'"], [true, 'SELECT id, name, tag FROM plants WHERE id = $1']] as const) {
    const url = await server.createDatabase(`sent_${prepared}`)
    // One connection, and no webhook or feed upkeep beside the store: its last statement is the read's.
    const store = await PostgresStore.open(url, 1, context, prepared)
    t.teardown(async () => await store.close())
    t.equal(await store.get(7n), undefined)
    const { rows } = await (await pgClient(t, url)).query("SELECT query FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'plant-store'")
    t.same(rows, [{ query: sent }], `preparedStatements ${prepared}: ${sent}`)
  }
})
