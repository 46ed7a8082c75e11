import { connect as tcpConnect, createServer, type Socket } from 'node:net'
import t from 'tap'
import type { Test } from 'tap'
import { SCHEMA_VERSION } from '../src/store/postgres-schema.js'
import { AUTH, assertError, postPlant, testApp } from './helpers/app.js'
import { pgClient, postgresUnavailable, startPostgres } from './helpers/postgres.js'

const UNAVAILABLE = { error: 503, message: 'the plant store is unavailable right now; retry later' }

/**
 * A TCP relay to PostgreSQL that can freeze: connections stay open but nothing passes
 * either way, as when the network drops every packet or the server hangs.
 */
async function startRelay (t: Test, target: string): Promise<{ url: string, freeze: () => void, thaw: () => void }> {
  const to = new URL(target)
  const sockets = new Set<Socket>()
  let frozen = false
  const relay = createServer((client) => {
    const upstream = tcpConnect(Number(to.port), to.hostname)
    for (const [from, into] of [[client, upstream], [upstream, client]]) {
      sockets.add(from)
      if (frozen) from.pause()
      from.on('data', (chunk) => into.write(chunk))
      from.on('error', () => {})
      from.on('close', () => {
        sockets.delete(from)
        into.destroy()
      })
    }
  })
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => relay.close(resolve))
  })
  const url = new URL(target)
  url.port = String((relay.address() as { port: number }).port)
  return {
    url: url.href,
    freeze: () => {
      frozen = true
      for (const socket of sockets) socket.pause()
    },
    thaw: () => {
      frozen = false
      for (const socket of sockets) socket.resume()
    }
  }
}

t.test('the PostgreSQL store', { skip: postgresUnavailable() }, async (t) => {
  const server = await startPostgres(t)

  t.test('migrations record the schema version; apps starting at once on an empty database all start', async (t) => {
    const url = await server.createDatabase('migrate')
    const apps = await Promise.all([1, 2, 3].map(async () => await testApp(t, { DATABASE_URL: url })))
    // The store is ready when the app is built unless its first attempt failed, as it
    // would if the migrations raced: then this first request would be a 503.
    const codes = await Promise.all(apps.map(async (app, i) => (await postPlant(app, { id: i, name: `app ${i}` })).statusCode))
    t.same(codes, [200, 200, 200], 'every app ready at once')

    const client = await pgClient(t, url)
    const { rows } = await client.query('SELECT version FROM plant_store_migrations ORDER BY version')
    t.same(rows.map((row) => row.version), Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1), 'each version recorded once')
    const { rows: indexes } = await client.query("SELECT indexdef FROM pg_indexes WHERE tablename = 'plants' ORDER BY indexname")
    t.match(indexes.map((row) => row.indexdef), [/INDEX plants_by_tag .*\(tag, id\)/, /UNIQUE INDEX plants_pkey .*\(id\)/])
  })

  t.test('a database at a newer schema version is left alone: 503 until the service is upgraded', async (t) => {
    const url = await server.createDatabase('newer')
    const client = await pgClient(t, url)
    await client.query('CREATE TABLE plant_store_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())')
    await client.query('INSERT INTO plant_store_migrations (version) VALUES (99)')
    const app = await testApp(t, { DATABASE_URL: url })
    t.same((await postPlant(app, { id: 1, name: 'a' })).json(), UNAVAILABLE)
    t.same((await client.query("SELECT to_regclass('plants') AS plants")).rows, [{ plants: null }], 'nothing was created')
  })

  t.test('batches of overlapping ids from several apps, in opposite orders, meet without a deadlock', async (t) => {
    const ids = Array.from({ length: 500 }, (_, i) => 1000 + i)
    const orders = [ids, ids.toReversed(), ids.filter((id) => id % 2 === 0).concat(ids.filter((id) => id % 2 === 1))]
    // Two rounds: the batches do not always overlap in time, and a deadlock needs them to.
    for (const round of [1, 2]) {
      const url = await server.createDatabase(`batches_${round}`)
      // 1500 requests at once can lag the event loop past the overload guard's limit on a
      // small machine; its 503s are not what this tests.
      const apps = await Promise.all(orders.map(async () => await testApp(t, { DATABASE_URL: url, MAX_EVENT_LOOP_DELAY_MS: '0' })))
      // While the table is locked each app's creates pile up into one large batch, and
      // its unlock lets the apps' batches into PostgreSQL together.
      const locker = await pgClient(t, url)
      await locker.query('BEGIN')
      await locker.query('LOCK TABLE plants IN EXCLUSIVE MODE')
      const answers = Promise.all(orders.map(async (order, i) =>
        await Promise.all(order.map(async (id) => [id, (await postPlant(apps[i], { id, name: `app ${i}` })).statusCode] as const))))
      while ((await locker.query('SELECT count(*)::int AS waiting FROM pg_locks WHERE NOT granted')).rows[0].waiting < apps.length) {
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
      await locker.query('COMMIT')
      const codes = (await answers).flat()
      t.same(codes.filter(([, code]) => code !== 200 && code !== 409), [], `round ${round}: each a 200 or a 409`)
      t.same(codes.filter(([, code]) => code === 200).map(([id]) => id).sort((a, b) => a - b), ids, `round ${round}: every id created once`)
    }
  })

  t.test('a database that stops answering: 503 within seconds, never a hang; served again when it answers', async (t) => {
    const relay = await startRelay(t, await server.createDatabase('frozen'))
    const app = await testApp(t, { DATABASE_URL: relay.url })
    t.equal((await postPlant(app, { id: 1, name: 'kept' })).statusCode, 200)

    relay.freeze()
    const started = Date.now()
    const answers = await Promise.all([
      postPlant(app, { id: 2, name: 'new' }),
      app.inject({ url: '/plants/1', headers: AUTH }),
      app.inject({ url: '/plants', headers: AUTH }),
      app.inject({ method: 'DELETE', url: '/plants/1', headers: AUTH })
    ])
    const elapsed = Date.now() - started
    for (const res of answers) assertError(t, res, 503)
    t.ok(elapsed < 10_000, `all answered within ${elapsed} ms`)

    relay.thaw()
    t.equal((await app.inject({ url: '/plants/1', headers: AUTH })).body, '{"id":1,"name":"kept"}', 'served again')
  })
})
