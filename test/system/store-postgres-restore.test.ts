import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { PostgresStore } from '../../src/store/postgres/store.ts'
import { AUTH, testApp } from '../helpers/app.ts'
import { postgresUnavailable, startPostgres } from '../helpers/postgres-cluster.ts'
import { getSetup } from '../helpers/postgres-setup.ts'
import { reported, servedPlants, storeCommand } from '../helpers/store-command.ts'
import { STORE_CONTEXT } from '../helpers/store-content.ts'

// PostgreSQL's backup and restore are pg_dump and pg_restore, as docs/backup.md gives them;
// `npm run store -- mark-restored` then restarts the change feed's history, as a SQLite
// restore does.

const run = promisify(execFile)

t.test('pg_dump, more writes, pg_restore --clean, mark-restored: the plants of the dump, and 410 for every cursor of the replaced history', { skip: postgresUnavailable() }, async (t) => {
  const { bindir } = getSetup() as { bindir: string }
  const dir = t.testdir()
  const server = await startPostgres(t)
  const url = await server.createDatabase('plants')
  const store = await PostgresStore.open(url, 2, STORE_CONTEXT)
  for (let id = 1n; id <= 20n; id++) await store.create({ id, name: `plant ${id}` })
  await store.delete(20n)
  await run(join(bindir, 'pg_dump'), ['--format=custom', `--file=${dir}/plants.dump`, `--dbname=${url}`])
  // Written after the dump: lost by the restore, as a follower of the feed may have seen.
  for (let id = 100n; id < 110n; id++) await store.create({ id, name: `later ${id}` })
  const latest = await store.changes.latest()
  await store.close()

  await run(join(bindir, 'pg_restore'), ['--clean', '--if-exists', `--dbname=${url}`, `${dir}/plants.dump`])
  const marked = await storeCommand(['mark-restored'], { DATABASE_URL: url })
  t.equal(marked.code, 0, marked.stderr)
  const restoredLatest = reported(marked.stdout, 'history reached seq')
  t.equal(restoredLatest, 21, 'the dump\'s history: 20 creates and a delete')
  const restarted = reported(marked.stdout, 'a new history after seq')
  t.equal(restarted, restoredLatest + 1e12, 'a gap past it: the replaced history is gone, its latest unknown')

  const app = await testApp(t, { DATABASE_URL: url })
  t.same((await servedPlants(app)).map(({ id }) => id), Array.from({ length: 19 }, (_, i) => BigInt(i + 1)), 'the plants of the dump')
  for (const cursor of [5, restoredLatest, latest]) {
    const res = await app.inject({ url: `/plants/changes?after=${cursor}`, headers: AUTH })
    t.equal(res.statusCode, 410, `cursor ${cursor}`)
    t.match(res.json().message, `the store was moved or restored: its history restarted after seq ${restarted}`)
  }
  const page = await app.inject({ url: '/plants/changes', headers: AUTH })
  t.same(page.json(), { changes: [], next: restarted, latest: restarted })
})
