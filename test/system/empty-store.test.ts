import { execFile } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { promisify } from 'node:util'
import t from 'tap'
import { NODE_ARGS, startServer } from '../helpers/server.ts'

// scripts/empty-store.ts, the first step of `npm run start:empty`: the plant store's own
// SQLite files go, its development token stays; anything else is refused and left as it is.

const SCRIPT = new URL('../../scripts/empty-store.ts', import.meta.url).pathname

async function emptyStore (env: NodeJS.ProcessEnv): Promise<{ code: number, stderr: string }> {
  try {
    const { stderr } = await promisify(execFile)(process.execPath, [...NODE_ARGS, SCRIPT], { env: { ...process.env, ...env } })
    return { code: 0, stderr }
  } catch (err) {
    const { code, stderr } = err as { code: number, stderr: string }
    return { code, stderr }
  }
}

t.test('the store is emptied and its development token kept: the next start serves an empty store to the same token', async (t) => {
  const dir = t.testdir()
  const env = { API_TOKENS: '', API_TOKENS_FILE: '', DATABASE_URL: `sqlite:${dir}/data/plants.db` }
  const first = await startServer(t, env)
  const token = readFileSync(`${dir}/data/plants.db.token`, 'utf8').trim()
  t.equal((await first.request('POST', '/plants', { token, body: { id: 1, name: 'Fern' } })).statusCode, 200)
  first.child.kill('SIGTERM')
  await first.exited
  const emptied = await emptyStore(env)
  t.same(emptied, { code: 0, stderr: `plant-store: emptied ${dir}/data/plants.db; the development token stays in ${dir}/data/plants.db.token\n` })
  t.notOk(existsSync(`${dir}/data/plants.db`))
  const second = await startServer(t, env)
  t.equal((await second.request('GET', '/plants', { token })).body, '[]', 'empty, and the same token accepted')
})

t.test('a store a running service has open is refused, and left to it', async (t) => {
  const dir = t.testdir()
  const env = { API_TOKENS: '', API_TOKENS_FILE: '', DATABASE_URL: `sqlite:${dir}/plants.db` }
  const running = await startServer(t, env)
  const token = readFileSync(`${dir}/plants.db.token`, 'utf8').trim()
  t.equal((await running.request('POST', '/plants', { token, body: { id: 1, name: 'Fern' } })).statusCode, 200)
  t.same(await emptyStore(env), { code: 1, stderr: `plant-store: cannot empty the store: ${dir}/plants.db is open in another process (a running service?): stop it first\n` })
  t.ok(existsSync(`${dir}/plants.db`))
  t.equal((await running.request('GET', '/plants/1', { token })).statusCode, 200, 'the service goes on serving its plants')
})

t.test("another application's database, PostgreSQL or a bad DATABASE_URL are refused, and nothing is deleted", async (t) => {
  const dir = t.testdir({ 'notes.db': 'not a database at all', 'notes.db-wal': 'x' })
  const foreign = await emptyStore({ DATABASE_URL: `sqlite:${dir}/notes.db` })
  t.equal(foreign.code, 1)
  t.equal(foreign.stderr, `plant-store: cannot empty the store: ${dir}/notes.db: file is not a database\n`)
  t.ok(existsSync(`${dir}/notes.db`) && existsSync(`${dir}/notes.db-wal`), 'left as it was')
  t.match(await emptyStore({ DATABASE_URL: 'postgres://plants@db.internal/plants' }), { code: 1, stderr: /empties a SQLite store only/ })
  t.match(await emptyStore({ DATABASE_URL: 'mysql://x' }), { code: 1, stderr: /cannot empty the store: DATABASE_URL must be sqlite:<path>/ })
  t.same(await emptyStore({ DATABASE_URL: 'memory:' }), { code: 0, stderr: '' }, 'memory: is empty at every start already')
  writeFileSync(`${dir}/gone.db-shm`, '')
  t.equal((await emptyStore({ DATABASE_URL: `sqlite:${dir}/gone.db` })).code, 0, 'no database: what is left of one goes')
  t.notOk(existsSync(`${dir}/gone.db-shm`))
})
