import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, closeSync, copyFileSync, existsSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs'
import Database from 'better-sqlite3'
import t from 'tap'
import { SCHEMA_VERSION } from '../../src/store/sqlite/schema.ts'
import { SqliteStore } from '../../src/store/sqlite/store.ts'
import { TOKEN } from '../helpers/app.ts'
import { startServer } from '../helpers/server.ts'
import { reported, storeCommand } from '../helpers/store-command.ts'
import { STORE_CONTEXT } from '../helpers/store-content.ts'

// What `npm run store -- restore` and `backup` refuse, each refusal leaving the store as it
// was; and a restore where there is no store, or only an unreadable one, to replace.

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex')

/** Overwrites the start of the plants table's root page: the file opens, PRAGMA integrity_check fails. */
function damage (path: string): void {
  const db = new Database(path)
  const page = Number(db.pragma('page_size', { simple: true }))
  const root = Number(db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'plants'").pluck().get())
  db.close()
  const fd = openSync(path, 'r+')
  writeSync(fd, Buffer.alloc(64, 0xff), 0, 64, (root - 1) * page + 8)
  closeSync(fd)
}

t.test('restore refuses what it cannot put back, and leaves the store as it was', async (t) => {
  const dir = t.testdir()
  const path = `${dir}/plants.db`
  const env = { DATABASE_URL: `sqlite:${path}` }
  const store = new SqliteStore(path, STORE_CONTEXT)
  for (let i = 0; i < 2000; i += 500) await Promise.all(Array.from({ length: 500 }, async (_, j) => await store.create({ id: BigInt(i + j), name: `plant ${i + j}` })))
  await store.close()
  t.equal((await storeCommand(['backup', `${dir}/good.db`], env)).code, 0)

  writeFileSync(`${dir}/garbage.db`, randomBytes(8192))
  writeFileSync(`${dir}/empty.db`, '')
  const foreign = new Database(`${dir}/foreign.db`)
  foreign.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT)')
  foreign.close()
  copyFileSync(`${dir}/good.db`, `${dir}/newer.db`)
  const newer = new Database(`${dir}/newer.db`)
  newer.pragma(`user_version = ${SCHEMA_VERSION + 1}`)
  newer.close()
  copyFileSync(`${dir}/good.db`, `${dir}/corrupt.db`)
  damage(`${dir}/corrupt.db`)
  copyFileSync(`${dir}/good.db`, `${dir}/live.db`)
  writeFileSync(`${dir}/live.db-wal`, 'frames')

  const before = sha256(path)
  const cases: Array<[string, RegExp]> = [
    ['garbage.db', /garbage\.db is not a Plant Store database: it is not a SQLite database/],
    ['empty.db', /empty\.db is not a Plant Store database: it holds no table/],
    ['foreign.db', /foreign\.db is not a Plant Store database: it holds tables that are not the plant store's \(users\)/],
    ['newer.db', new RegExp(`newer\\.db is at schema version ${SCHEMA_VERSION + 1}, newer than this code's ${SCHEMA_VERSION}`)],
    ['corrupt.db', /corrupt\.db fails PRAGMA integrity_check: ./],
    ['live.db', /live\.db has a -wal file beside it, which a copy of it would miss: make backups with the backup command/],
    ['absent.db', /absent\.db does not exist/],
    ['plants.db', /is the store's own file: restore from a backup elsewhere/]
  ]
  for (const [file, message] of cases) {
    const res = await storeCommand(['restore', `${dir}/${file}`], env)
    t.equal(res.code, 1, file)
    t.match(res.stderr, message, file)
    t.equal(res.stdout, '')
    t.equal(sha256(path), before, `${file}: the store is as it was`)
    t.same(['.restoring', '-wal', '-shm'].filter((suffix) => existsSync(`${path}${suffix}`)), [], `${file}: nothing is left beside it`)
  }

  const server = await startServer(t, { ...env, API_TOKENS: TOKEN })
  const running = await storeCommand(['restore', `${dir}/good.db`], env)
  t.equal(running.code, 1)
  t.match(running.stderr, `${path} is open in another process (a running service?): stop it first`)
  t.equal((await server.request('GET', '/plants/1999')).statusCode, 200, 'the service goes on')
  t.equal((await server.request('POST', '/plants', { body: { id: 5000, name: 'still written' } })).statusCode, 200)
  server.child.kill('SIGTERM')
  await server.exited
  chmodSync(path, 0o640)
  t.equal((await storeCommand(['restore', `${dir}/good.db`], env)).code, 0, 'once it stopped, the restore goes ahead')
  t.equal(statSync(path).mode & 0o777, 0o640, 'the restored file keeps the replaced file\'s mode')
})

t.test('a restore with no store in place, or an unreadable one, restarts the history past the backup\'s', async (t) => {
  const dir = t.testdir()
  const path = `${dir}/plants.db`
  const store = new SqliteStore(path, STORE_CONTEXT)
  await store.create({ id: 1n, name: 'one' })
  await store.close()
  const made = await storeCommand(['backup', `${dir}/backup.db`], { DATABASE_URL: `sqlite:${path}` })
  t.equal(made.code, 0, made.stderr)
  const latest = reported(made.stdout, 'change feed up to seq')
  // A new machine: not even the database's folder is there.
  for (const [name, replaced, said] of [['fresh/new.db', undefined, 'there was no file to replace'], ['garbage.db', randomBytes(4096), 'the replaced file could not be read']] as const) {
    if (replaced !== undefined) writeFileSync(`${dir}/${name}`, replaced)
    const res = await storeCommand(['restore', `${dir}/backup.db`], { DATABASE_URL: `sqlite:${dir}/${name}` })
    t.equal(res.code, 0, res.stderr)
    t.match(res.stdout, said)
    t.equal(reported(res.stdout, 'a new history after seq'), latest + 1e12, `${name}: a gap past the backup's latest seq`)
  }
  // A file restored by other means (a file-system snapshot) is marked by hand.
  const marked = await storeCommand(['mark-restored'], { DATABASE_URL: `sqlite:${dir}/fresh/new.db` })
  t.equal(marked.code, 0, marked.stderr)
  t.match(marked.stdout, `the change feed's history reached seq ${latest + 1e12}; a new history after seq ${latest + 2e12}`)
})

t.test('backup refuses to write over a file, and a store that is not SQLite', async (t) => {
  const dir = t.testdir()
  writeFileSync(`${dir}/taken.db`, 'mine')
  const cases: Array<[string[], string, RegExp]> = [
    [['backup', `${dir}/taken.db`], `sqlite:${dir}/plants.db`, /taken\.db exists already: name a new file/],
    [['backup', `${dir}/new.db`], `sqlite:${dir}/nothing.db`, /nothing\.db does not exist: there is no store to back up/],
    [['backup', `${dir}/new.db`], 'postgres://localhost/plants', /for PostgreSQL use pg_dump and pg_restore, then mark-restored/],
    [['restore', `${dir}/taken.db`], 'memory:', /restore is for a SQLite store, and DATABASE_URL names memory:/],
    [['backup'], `sqlite:${dir}/plants.db`, /backup takes one argument/]
  ]
  for (const [args, url, message] of cases) {
    const res = await storeCommand(args, { DATABASE_URL: url })
    t.equal(res.code, 1, args.join(' '))
    t.match(res.stderr, message)
  }
  t.equal(readFileSync(`${dir}/taken.db`, 'utf8'), 'mine')
  rmSync(`${dir}/taken.db`)
})
