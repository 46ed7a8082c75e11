import { execFile } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { chmod, readFile, writeFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import t from 'tap'
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import { APPLICATION_ID, SCHEMA_VERSION } from '../../src/store/sqlite/schema.ts'
import { AUTH, assertError, postPlant, testApp, TOKEN } from '../helpers/app.ts'
import { failedStart } from '../helpers/server.ts'

// The SQLite store's file: made with its folder, kept across restarts, and at start taken,
// upgraded and marked, or refused and left untouched when it cannot be used or is another's.

const execFileAsync = promisify(execFile)

t.test('plants survive a restart on the same file, ids beyond 2^53 distinct', async (t) => {
  const url = `sqlite:${t.testdir()}/plants.db`
  const first = await testApp(t, { DATABASE_URL: url })
  t.equal((await postPlant(first, '{"id":9007199254740992,"name":"a"}')).statusCode, 200)
  t.equal((await postPlant(first, '{"id":9007199254740993,"name":"b","tag":"t"}')).statusCode, 200)
  await first.close()

  const second = await testApp(t, { DATABASE_URL: url })
  t.equal((await postPlant(second, '{"id":9007199254740993,"name":"b","tag":"t"}')).statusCode, 200, 'retry after restart')
  assertError(t, await postPlant(second, '{"id":9007199254740992,"name":"b"}'), 409)
  assertError(t, await postPlant(second, '{"id":9007199254740993,"name":"a"}'), 409)
  t.equal((await second.inject({ url: '/plants', headers: AUTH })).body,
    '[{"id":9007199254740992,"name":"a"},{"id":9007199254740993,"name":"b","tag":"t"}]')
  t.equal((await second.inject({ method: 'DELETE', url: '/plants/9007199254740992', headers: AUTH })).statusCode, 204)
  await second.close()

  const third = await testApp(t, { DATABASE_URL: url })
  assertError(t, await third.inject({ url: '/plants/9007199254740992', headers: AUTH }), 404, 'the delete survived too')
})

t.test('the folder of the file is created, and the schema version is recorded', async (t) => {
  const path = `${t.testdir()}/nested/deeper/plants.db`
  const app = await testApp(t, { DATABASE_URL: `sqlite:${path}` })
  t.equal((await postPlant(app, { id: 1, name: 'a' })).statusCode, 200)
  await app.close()
  const db = new Database(path, { readonly: true })
  t.teardown(() => db.close())
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION)
  t.equal(db.pragma('application_id', { simple: true }), APPLICATION_ID, "the file is marked the plant store's")
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal')
})

t.test('a file the service cannot use stops the start with a clear message', async (t) => {
  const dir = t.testdir({ 'garbage.db': 'this is not a database, just text '.repeat(200) })
  const start = async (url: string) => await buildApp(loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: url }))
  await t.rejects(start(`sqlite:${dir}/garbage.db`), /not a database/)
  await writeFile(`${dir}/a-file`, '')
  await t.rejects(start(`sqlite:${dir}/a-file/plants.db`), /EEXIST|ENOTDIR|not a directory/)

  const newer = new Database(`${dir}/newer.db`)
  newer.pragma(`application_id = ${APPLICATION_ID}`)
  newer.pragma('user_version = 99')
  newer.close()
  await t.rejects(start(`sqlite:${dir}/newer.db`), /schema version 99, newer than/)
  // SQLite's own words named no file; a device got a journal beside it (/dev/null-journal).
  await execFileAsync('mkfifo', [`${dir}/pipe`])
  for (const path of [dir, `${dir}/pipe`]) {
    await t.rejects(start(`sqlite:${path}`), { message: `DATABASE_URL sqlite:${path} cannot be used: it is not a regular file` })
  }
  t.equal(existsSync(`${dir}/pipe-journal`), false, 'nothing written beside it')
})

t.test('a database file the service cannot write stops the start, naming DATABASE_URL; once writable, it starts with what it held', async (t) => {
  // As a file owned by another user is to the service; root writes whatever the mode
  // says, but not a file marked immutable.
  const root = process.getuid?.() === 0
  // A run killed before its teardown left the file immutable, and its folder could not
  // be made again.
  if (root && existsSync(t.testdirName)) await execFileAsync('chattr', ['-R', '-i', t.testdirName])
  const file = `${t.testdir()}/plants.db`
  const first = await testApp(t, { DATABASE_URL: `sqlite:${file}` })
  t.equal((await postPlant(first, { id: 1, name: 'Fern' })).statusCode, 200)
  await first.close()
  let locked = false
  const writable = async (yes: boolean): Promise<void> => {
    if (root) await execFileAsync('chattr', [yes ? '-i' : '+i', file])
    else await chmod(file, yes ? 0o644 : 0o444)
    locked = !yes
  }
  await writable(false)
  // Else the test's folder could not be removed.
  t.teardown(async () => { if (locked) await writable(true) })
  // Before, it started ready (/health/ready 200) and answered every create 503.
  const { code, stderr } = await failedStart({ API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${file}` })
  t.equal(code, 1)
  t.equal(stderr, `plant-store: cannot start: DATABASE_URL sqlite:${file} cannot be used: it is read-only to the service ` +
    '(its owner or mode, an immutable attribute, a read-only mount?): no plant could be stored\n')
  await writable(true)
  const again = await testApp(t, { DATABASE_URL: `sqlite:${file}` })
  t.equal((await again.inject({ url: '/plants/1', headers: AUTH })).statusCode, 200)
})

t.test("another application's database is refused at start and left untouched; an empty file is taken", async (t) => {
  const dir = t.testdir({ 'empty.db': '' })
  const file = `${dir}/other.db`
  const other = new Database(file)
  // PRAGMA user_version 0, as most applications leave it; sqlite_sequence is SQLite's.
  other.exec(`CREATE TABLE invoices (id INTEGER PRIMARY KEY AUTOINCREMENT, total REAL);
    CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
    CREATE TABLE orders (id INTEGER PRIMARY KEY);
    CREATE VIEW unpaid AS SELECT id FROM invoices;
    INSERT INTO invoices (total) VALUES (9.5)`)
  other.close()
  const before = await readFile(file)
  // Before, the service added its tables to these, switched the file to WAL and started.
  const { code, stderr } = await failedStart({ API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${file}` })
  t.equal(code, 1)
  t.equal(stderr, `plant-store: cannot start: DATABASE_URL sqlite:${file} cannot be used: it holds tables that are not ` +
    "the plant store's (customers, invoices, orders and 1 more) and was left untouched: name a new file, or the plant store's own\n")
  t.same(await readFile(file), before, 'not a byte of it changed')
  t.same(readdirSync(dir).sort(), ['empty.db', 'other.db'], 'nothing written beside it')

  // A file of no bytes is a new database, as SQLite makes one.
  const app = await testApp(t, { DATABASE_URL: `sqlite:${dir}/empty.db` })
  t.equal((await postPlant(app, { id: 1, name: 'Fern' })).statusCode, 200)
})

t.test("an application's database that numbers its schema, or marks the file as its own, is refused and left untouched", async (t) => {
  const dir = t.testdir()
  const start = async (file: string) => await buildApp(loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: `sqlite:${file}` }))
  const refused = async (name: string, sql: string, message: RegExp): Promise<void> => {
    const file = `${dir}/${name}.db`
    const other = new Database(file)
    other.exec(sql)
    other.close()
    const before = await readFile(file)
    await t.rejects(start(file), { message }, name)
    t.same(await readFile(file), before, `${name}: not a byte of it changed`)
  }
  // Before, each of the first two was migrated: the plant store's tables added, the file switched to WAL.
  await refused('numbered', 'CREATE TABLE customers (id INTEGER PRIMARY KEY); CREATE TABLE invoices (id INTEGER PRIMARY KEY); PRAGMA user_version = 2',
    /it holds tables that are not the plant store's \(customers, invoices\) and was left untouched/)
  await refused('numbered-empty', 'PRAGMA user_version = 1',
    /it is at schema version 1 \(PRAGMA user_version\) without the plant store's tables of that version \(plants\) and was left untouched/)
  // A GeoPackage, say, marks its files "GPKG".
  await refused('marked', 'PRAGMA application_id = 1196444487',
    /its PRAGMA application_id is 0x47504b47, not the plant store's, and was left untouched/)
  await refused('numbered-beyond', 'CREATE TABLE plants (id INTEGER PRIMARY KEY); PRAGMA user_version = 99',
    /without the plant store's tables of that version \(webhooks, webhook_deliveries, webhook_events, event_horizon, idempotency_keys, plant_erasures\)/)
  t.same(readdirSync(dir).sort(), ['marked.db', 'numbered-beyond.db', 'numbered-empty.db', 'numbered.db'], 'nothing written beside them')
})

t.test('a file the plant store made before it marked its files is taken, upgraded and marked', async (t) => {
  const dir = t.testdir()
  for (const version of [2, SCHEMA_VERSION]) {
    const file = `${dir}/v${version}.db`
    const first = await testApp(t, { DATABASE_URL: `sqlite:${file}` })
    t.equal((await postPlant(first, { id: 1, name: 'Fern' })).statusCode, 200)
    await first.close()
    const old = new Database(file)
    // Version 2 had the plants alone.
    if (version === 2) {
      const later = old.prepare<[], string>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT IN ('plants', 'sqlite_sequence')").pluck().all()
      old.exec(`${later.map((name) => `DROP TABLE ${name};`).join(' ')} PRAGMA user_version = 2`)
    }
    old.pragma('application_id = 0')
    old.close()

    const app = await testApp(t, { DATABASE_URL: `sqlite:${file}` })
    t.equal((await app.inject({ url: '/plants/1', headers: AUTH })).body, '{"id":1,"name":"Fern"}', `version ${version}: its plant is served`)
    t.equal((await app.inject({ url: '/webhooks', headers: AUTH })).statusCode, 200, `version ${version}: webhooks too`)
    await app.close()
    const db = new Database(file, { readonly: true })
    t.same([db.pragma('user_version', { simple: true }), db.pragma('application_id', { simple: true })], [SCHEMA_VERSION, APPLICATION_ID], `version ${version}: upgraded and marked`)
    db.close()
  }
})
