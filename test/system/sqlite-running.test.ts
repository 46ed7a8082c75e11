import { execFile } from 'node:child_process'
import { rmSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { pino } from 'pino'
import t from 'tap'
import { SqliteStore } from '../../src/store/sqlite/store.ts'
import { AUTH, assertError, postPlant, testApp, TOKEN } from '../helpers/app.ts'
import { errorLines, logsArrived, startServer, waitForLine } from '../helpers/server.ts'

// The SQLite store while the service runs: no answer before its write is on disk, another
// connection's lock and commits, a full disk, a damaged page, a file deleted under it, group commit.

const execFileAsync = promisify(execFile)

t.test('nothing is answered before it is on disk: a read, a conflict or a 404 that saw a write never comes before the write is acknowledged', async (t) => {
  // The WAL is synced off the event loop after each commit, so a commit is visible to
  // reads before it is durable; every answer that saw it must wait for the sync. Each
  // round races a write with requests sent every event-loop turn until they see it.
  const app = await testApp(t, { DATABASE_URL: `sqlite:${t.testdir()}/plants.db` })
  const seen = async (write: Promise<unknown>, probe: () => Promise<boolean>): Promise<boolean> => {
    let acknowledged = false
    const watched = write.then(() => { acknowledged = true })
    while (!(await probe())) await new Promise(setImmediate)
    // Answers that leave in the same event-loop turn count as together.
    await new Promise(setImmediate)
    const inOrder = acknowledged
    await watched
    return inOrder
  }
  let early = 0
  for (let id = 1; id <= 40; id++) {
    const create = postPlant(app, { id, name: 'a' })
    if (!await seen(create, async () => (await app.inject({ url: `/plants/${id}`, headers: AUTH })).statusCode === 200)) early++
    await create
    const created = postPlant(app, { id: 1000 + id, name: 'a' })
    if (!await seen(created, async () => (await postPlant(app, { id: 1000 + id, name: 'b' })).statusCode === 409)) early++
    await created
    const deleted = app.inject({ method: 'DELETE', url: `/plants/${id}`, headers: AUTH })
    if (!await seen(deleted, async () => !(await app.inject({ url: '/plants?limit=100', headers: AUTH })).body.includes(`"id":${id},`))) early++
    t.equal((await deleted).statusCode, 204)
  }
  t.equal(early, 0, 'no answer came before the write it saw was acknowledged')
})

t.test('a locked database answers 503 to writes, logs it once while reads go on, and recovers by itself', async (t) => {
  const path = `${t.testdir()}/plants.db`
  const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${path}` })
  const post = async (id: number) => await server.request('POST', '/plants', { body: { id, name: `p${id}` } })
  t.equal((await post(1)).statusCode, 200)

  const locker = new Database(path)
  t.teardown(() => locker.close())
  locker.exec('BEGIN IMMEDIATE') // holds the write lock, as another writer would
  for (const id of [2, 3, 4]) {
    const res = await post(id)
    t.equal(res.statusCode, 503, `create ${id} while locked`)
    t.same(res.json(), { error: 503, message: 'the plant store is unavailable right now; retry after the delay in Retry-After', code: 'store_unavailable' })
    // Reads still work, and say nothing of whether writes do.
    t.equal((await server.request('GET', '/plants/1')).statusCode, 200, `a read after create ${id}`)
    t.equal((await server.request('GET', '/health/ready')).statusCode, 200)
  }
  // A create waits for the lock off the event loop: a read sent while it waits is
  // answered first. SQLite's own busy timeout held every request for the whole wait.
  const answered: string[] = []
  const create = post(5).then((res) => { answered.push('create'); return res })
  await sleep(30)
  const read = server.request('GET', '/plants/1').then((res) => { answered.push('read'); return res })
  t.equal((await read).statusCode, 200)
  t.equal((await create).statusCode, 503)
  t.same(answered, ['read', 'create'], 'a read is not held behind a write waiting for the lock')
  t.notOk(server.stdout.some((line) => line.includes('available again')), 'no read ends the outage')
  locker.exec('COMMIT')
  t.equal((await post(2)).statusCode, 200, 'recovered once the lock is gone')
  await waitForLine(server.stdout, /available again/)
  t.equal(server.stdout.filter((line) => line.includes('store takes no writes')).length, 1, 'the outage is logged once')
  const logged = JSON.parse(server.stdout.find((line) => line.includes('store takes no writes'))!)
  t.match(logged.err.message, /locked|busy/i, 'with its cause')
})

t.test('a disk that takes no more: writes answer 503 while reads go on, logged once; once it takes writes again, nothing answered 200 is lost and nothing answered 503 was kept', async (t) => {
  const url = `sqlite:${t.testdir()}/plants.db`
  // The process may write no file past 1 MiB, as a full disk or a quota would have it:
  // the WAL cannot grow, and the first commit that needs it to fails.
  const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: url }, { fileBytes: 1 << 20 })
  const pid = String(server.child.pid)
  const lift = async () => await execFileAsync('prlimit', ['--pid', pid, '--fsize=unlimited'])
  // Whatever happens here, the process writes its coverage at exit without a limit.
  t.teardown(async () => { await lift().catch(() => {}) })
  const name = (id: number) => `${id}`.padEnd(1000, '~')
  const post = async (id: number) => await server.request('POST', '/plants', { body: { id, name: name(id) } })

  const kept: number[] = []
  const refused: number[] = []
  const create = async (id: number) => {
    const res = await post(id)
    if (res.statusCode === 200) {
      kept.push(id)
    } else {
      assertError(t, res, 503, 'store_unavailable')
      refused.push(id)
    }
  }
  // 16 at a time, sharing commits as concurrent clients do, until a commit fails; then
  // one at a time (a smaller commit may still fit) until even one plant does not, after
  // which none does: a failed commit leaves the WAL as it was, and each plant is the
  // size of the last.
  let next = 1
  for (; refused.length === 0 && next < 4000; next += 16) {
    await Promise.all(Array.from({ length: 16 }, async (_, i) => await create(next + i)))
  }
  // Each plant is written twice, as its row and as its event (its name in the payload).
  t.ok(kept.length > 40, `${kept.length} plants were kept before the disk took no more`)
  for (let tried = 0; tried < 100; tried++) {
    await create(next++)
    if (refused.at(-1) === next - 1) break
  }
  t.equal(refused.at(-1), next - 1, 'the disk takes no more, not even one plant')
  const lines = (text: string) => server.stdout.filter((line) => line.includes(text)).length
  await logsArrived(server)
  // A commit that failed before a smaller one fitted is an outage of its own, over when it fitted.
  t.equal(lines('store takes no writes'), lines('store is available again') + 1, 'each outage is logged once, as it begins')
  const logged = lines('store takes no writes')
  for (const id of [next, next + 1, next + 2]) {
    await create(id)
    t.equal(refused.at(-1), id, `create ${id} is refused`)
    t.equal((await server.request('GET', `/plants/${kept[0]}`)).statusCode, 200, `a read after create ${id}`)
    t.equal((await server.request('GET', '/plants?limit=10')).statusCode, 200, `a page after create ${id}`)
    t.equal((await server.request('GET', '/health/ready')).statusCode, 200)
  }
  await logsArrived(server)
  const outages = server.stdout.filter((line) => line.includes('store takes no writes'))
  t.equal(outages.length, logged, 'the refused creates and the reads log no other outage')
  t.match(JSON.parse(outages.at(-1)!).err.code, /^SQLITE_(FULL|IOERR)/, 'the outage is logged with its cause')

  const recovered = lines('store is available again')
  await lift()
  await create(next + 3)
  t.equal(kept.at(-1), next + 3, 'a create once the disk takes writes again')
  await logsArrived(server)
  t.equal(lines('store is available again'), recovered + 1, 'which ends the outage, logged once')
  t.same(errorLines(server.stdout).filter((line) => !line.includes('store takes no writes')), [], 'nothing else went wrong: no 500')

  // On the same file after a restart: every plant answered 200, and no plant answered 503.
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0, 'a graceful stop')
  const restarted = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: url })
  const page = await restarted.request('GET', '/plants?limit=1000')
  t.equal(page.statusCode, 200)
  const stored = new Map(page.json<Array<{ id: number, name: string }>>().map((plant) => [plant.id, plant.name]))
  t.same([...stored.keys()].sort((a, b) => a - b), kept.sort((a, b) => a - b), 'exactly the plants answered 200')
  t.ok(kept.every((id) => stored.get(id) === name(id)), 'each with its name')
})

t.test('a read that meets a damaged page of the file answers 503, and the service goes on', async (t) => {
  const file = `${t.testdir()}/plants.db`
  const setup = await testApp(t, { DATABASE_URL: `sqlite:${file}` })
  await setup.close()
  const db = new Database(file)
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
    INSERT INTO plants (id, name) SELECT i, 'plant ' || i FROM n`)
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
  // The plants table's root page, overwritten as a bad sector or a stray write would.
  const handle = await open(file, 'r+')
  await handle.write(Buffer.alloc(4096, 0xa5), 0, 4096, 4096)
  await handle.close()

  const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${file}` })
  for (let i = 0; i < 3; i++) {
    const page = await server.request('GET', '/plants?limit=2')
    assertError(t, page, 503, 'store_unavailable')
    // A damaged read must fail alone: no error escapes from a callback where nothing catches it.
    await sleep(100)
    t.equal(server.child.exitCode, null, `the service still runs after damaged read ${i + 1}`)
  }
  t.equal((await server.request('GET', '/health')).statusCode, 200)
  await logsArrived(server)
  t.ok(server.stdout.some((line) => line.includes('malformed')), 'the cause is logged')
})

t.test('a database file deleted or replaced while the service runs: nothing more is acknowledged, readiness says so, reads go on', async (t) => {
  for (const how of ['deleted', 'replaced by another file']) {
    const file = `${t.testdir()}/${how.split(' ')[0]}.db`
    const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${file}` })
    t.equal((await server.request('POST', '/plants', { body: { id: 1, name: 'Fern' } })).statusCode, 200)
    // As a deploy that replaces the release's directory, or a cleanup, would do it. Before,
    // every create went on answering 200, into a file no one would open again.
    for (const part of ['', '-wal', '-shm']) rmSync(`${file}${part}`)
    if (how !== 'deleted') new Database(file).close()
    assertError(t, await server.request('POST', '/plants', { body: { id: 2, name: 'Ivy' } }), 503, 'store_unavailable')
    assertError(t, await server.request('GET', '/health/ready'), 503, 'not_ready')
    t.equal((await server.request('GET', '/plants/1')).statusCode, 200, `${how}: what it holds is still read`)
    const line = JSON.parse(await waitForLine(server.stdout, /the SQLite store takes no writes/))
    t.match(line.err.message, `the database file ${file} was ${how} while the service ran`)
  }
})

t.test('the next read sees what another connection committed meanwhile', async (t) => {
  const path = `${t.testdir()}/plants.db`
  const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${path}` })
  const other = new Database(path) // another process's connection, as an operator's would be
  t.teardown(() => other.close())
  const insert = other.prepare('INSERT INTO plants (id, name) VALUES (?, ?)')
  for (let id = 1; id <= 5; id++) {
    t.equal((await server.request('GET', `/plants/${id}`)).statusCode, 404, `plant ${id}: not there yet`)
    insert.run(id, `p${id}`)
    const res = await server.request('GET', `/plants/${id}`)
    t.equal(res.statusCode, 200, `plant ${id}, written by the other connection, is seen by the next read`)
  }
})

t.test('a create in the same commit as the first subscription is announced when it comes after it, and not before', async (t) => {
  // Below HTTP, to put the three writes in one group-commit transaction: the first
  // create finds no subscription, and the store must not keep believing it for the next.
  const store = new SqliteStore(`${t.testdir()}/plants.db`, { log: pino({ level: 'silent' }), maxBatch: 512, maxQueueBytes: 1 << 20, onBatch: () => {} })
  t.teardown(async () => await store.close())
  const subscription = { id: 'wh_1', url: 'http://127.0.0.1:9/', secret: 'whsec_x', createdAt: new Date() }
  let told = 0
  const outcomes = await Promise.all([
    store.create({ id: 1n, name: 'before' }),
    store.webhooks.subscribe(subscription, 10),
    store.create({ id: 2n, name: 'after' })
  ])
  store.commits.on('committed', ({ deliveries }) => { told += deliveries })
  t.same(outcomes.map((outcome) => typeof outcome === 'string' ? outcome : outcome.outcome), ['created', 'subscribed', 'created'])
  t.same((await store.webhooks.deliveries('wh_1', { limit: 10 })).map((delivery) => delivery.plantId), [2n], 'plant 2 only')
  await store.create({ id: 3n, name: 'later' })
  t.same((await store.webhooks.deliveries('wh_1', { limit: 10 })).map((delivery) => delivery.plantId), [3n, 2n], 'and every later one')
  t.equal(told, 1, 'the later create was told to the dispatcher')
})
