import { chmodSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import t from 'tap'
import { loadConfig } from '../../src/config.ts'
import { devToken } from '../../src/tokens/dev-token.ts'
import { failedStart, logsArrived, startServer, waitForLine, type RunningServer } from '../helpers/server.ts'

// Neither API_TOKENS nor API_TOKENS_FILE: the service makes its own token.
const NO_TOKENS = { API_TOKENS: '', API_TOKENS_FILE: '' }

async function generatedToken (server: RunningServer): Promise<string> {
  return /generated token (\S+)/.exec(await waitForLine(server.stderr, /generated token/))![1]
}

async function stop (server: RunningServer): Promise<void> {
  server.child.kill('SIGTERM')
  await server.exited
}

t.test('on SQLite the generated token is kept beside the database, 0600, and every start accepts it again', async (t) => {
  const dir = t.testdir()
  const env = { ...NO_TOKENS, DATABASE_URL: `sqlite:${dir}/data/plants.db` }
  const first = await startServer(t, env)
  const token = await generatedToken(first)
  t.match(first.stderr.join('\n'), `kept in ${dir}/data/plants.db.token`, 'it says where')
  t.equal((await first.request('POST', '/plants', { body: { id: 1, name: 'Fern' }, token })).statusCode, 200)
  await stop(first)
  t.equal(statSync(`${dir}/data/plants.db.token`).mode & 0o777, 0o600, 'readable by its owner only')

  const second = await startServer(t, env)
  t.equal(await generatedToken(second), token, 'the same token, printed again')
  t.equal((await second.request('GET', '/plants/1', { token })).statusCode, 200, 'and accepted')
  await logsArrived(second)
  t.notOk(second.stdout.some((line) => line.includes(token)), 'never in the logs')
})

t.test('memory: a new token at each start, kept nowhere', async (t) => {
  const first = await startServer(t, { ...NO_TOKENS, DATABASE_URL: 'memory:' })
  const second = await startServer(t, { ...NO_TOKENS, DATABASE_URL: 'memory:' })
  const [a, b] = [await generatedToken(first), await generatedToken(second)]
  t.not(a, b)
  t.match(first.stderr.join('\n'), /for this run only/)
  t.equal((await second.request('GET', '/plants', { token: a })).statusCode, 401, "one run's token is not another's")
})

t.test('a token file others may read, or that holds no token, stops the start', async (t) => {
  const dir = t.testdir()
  const kept = (name: string, content: string, mode: number) => {
    writeFileSync(`${dir}/${name}.db.token`, content)
    chmodSync(`${dir}/${name}.db.token`, mode)
    return { ...NO_TOKENS, DATABASE_URL: `sqlite:${dir}/${name}.db` }
  }
  const [open, garbage] = await Promise.all([
    failedStart(kept('open', 'a-valid-token-0123456789', 0o644)),
    failedStart(kept('garbage', 'not a token!', 0o600))
  ])
  t.equal(open.code, 1)
  t.match(open.stderr, `plant-store: cannot start: the development token file ${dir}/open.db.token has mode 0644; it must be 0600, readable by its owner only; fix it, or delete it to have a new token made`)
  t.equal(garbage.code, 1)
  t.match(garbage.stderr, `plant-store: cannot start: the development token file ${dir}/garbage.db.token does not hold a valid token: it has characters a bearer token cannot carry`)

  const cases: Array<[string, string, RegExp]> = [
    ['too short', 'short', /does not hold a valid token: it is 5 characters long; a token needs at least 16/],
    ['empty', '\n', /is empty/],
    ['too large', 'a'.repeat(1000), /is larger than 256 bytes/]
  ]
  for (const [name, content, message] of cases) {
    t.throws(() => loadConfig(kept(name, content, 0o600), devToken), message, name)
  }
  const env = kept('good', ' a-valid-token-0123456789\n', 0o600)
  t.equal(loadConfig(env, devToken).generatedToken, 'a-valid-token-0123456789', 'a token a person wrote in, with spaces and a newline around it, is read')
  writeFileSync(`${dir}/a-file`, '')
  t.throws(() => loadConfig({ ...NO_TOKENS, DATABASE_URL: `sqlite:${dir}/a-file/plants.db` }, devToken), { code: 'ENOTDIR' }, 'a file that cannot be opened')
})

t.test('SQLite in memory keeps no token either', async (t) => {
  const cwd = process.cwd()
  process.chdir(t.testdir())
  t.teardown(() => process.chdir(cwd))
  t.type(loadConfig({ ...NO_TOKENS, DATABASE_URL: 'sqlite::memory:' }, devToken).generatedToken, 'string')
  t.same(readdirSync('.'), [], 'no file written')
})
