import type { ChildProcess } from 'node:child_process'
import { execFileSync } from 'node:child_process'
import { chmodSync, readdirSync, readlinkSync, rmSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { assertError, AUTH, testApp } from '../helpers/app.ts'
import { logsArrived, startServer, waitForLine, type RunningServer } from '../helpers/server.ts'
import { testToken, writeTokens } from '../helpers/tokens.ts'
import { retryUntil } from '../helpers/wait.ts'

const keeper = testToken('keeper', ['plants:read', 'plants:write'])
const leaving = testToken('leaving', ['plants:read'])
const newcomer = testToken('newcomer', ['plants:read'])
const departing = testToken('departing', ['plants:write'])
const bearer = (token: { value: string }) => ({ authorization: `Bearer ${token.value}` })

t.test('reloadTokens puts the file in force at once: added tokens work, removed ones answer 401', async (t) => {
  const file = writeTokens(`${t.testdir()}/tokens.json`, [keeper, leaving])
  const app = await testApp(t, { API_TOKENS: '', API_TOKENS_FILE: file })
  const status = async (token: { value: string }) => (await app.inject({ url: '/plants', headers: bearer(token) })).statusCode
  t.same([await status(keeper), await status(leaving), await status(newcomer)], [200, 200, 401])

  writeTokens(file, [keeper, newcomer])
  t.equal(app.reloadTokens(), true)
  t.same([await status(keeper), await status(leaving), await status(newcomer)], [200, 401, 200])

  // Scopes change with the file too.
  writeTokens(file, [keeper, { ...newcomer, scopes: ['plants:write'] }])
  t.equal(app.reloadTokens(), true)
  assertError(t, await app.inject({ url: '/plants', headers: bearer(newcomer) }), 403)
})

t.test('a file that cannot be used changes nothing: the previous tokens stay in force', async (t) => {
  const file = writeTokens(`${t.testdir()}/tokens.json`, [keeper])
  const app = await testApp(t, { API_TOKENS: '', API_TOKENS_FILE: file })
  for (const broken of ['[{"name": "keeper"', JSON.stringify([{ name: 'x', sha256: 'no', scopes: ['plants:read'] }]), '{}']) {
    writeTokens(file, broken)
    t.equal(app.reloadTokens(), false, broken)
    t.equal((await app.inject({ url: '/plants', headers: bearer(keeper) })).statusCode, 200, 'the previous token still works')
  }
})

t.test('without a tokens file there is nothing to reload, and API_TOKENS stay in force', async (t) => {
  const app = await testApp(t)
  t.equal(app.reloadTokens(), false)
  t.equal((await app.inject({ url: '/plants', headers: AUTH })).statusCode, 200)
})

t.test('a tokens file others may write is refused on SIGHUP; one others may read is loaded with a warning', async (t) => {
  const file = writeTokens(`${t.testdir()}/tokens.json`, [keeper])
  const server = await startServer(t, { API_TOKENS: '', API_TOKENS_FILE: file })
  const status = async (token: typeof keeper) => (await server.request('GET', '/plants', { token: token.value })).statusCode
  writeTokens(file, [newcomer])
  chmodSync(file, 0o666)
  server.child.kill('SIGHUP')
  await logged(server, /API_TOKENS_FILE not reloaded/, 1)
  t.ok(server.stdout.some((line) => line.includes('others may write it')), 'the refusal says why')
  t.same([await status(keeper), await status(newcomer)], [200, 401], 'the previous tokens stay in force')
  chmodSync(file, 0o644)
  server.child.kill('SIGHUP')
  await logged(server, /API_TOKENS_FILE reloaded/, 1)
  await logged(server, /others may read it/, 1)
  t.same([await status(keeper), await status(newcomer)], [401, 200], 'loaded, with a warning')
})

t.test('without a tokens file, SIGHUP says the generated development token stays in force', async (t) => {
  const server = await startServer(t, { API_TOKENS: '' })
  server.child.kill('SIGHUP')
  await logged(server, /no API_TOKENS_FILE to reload: the generated development token stays in force/, 1)
  t.pass('logged, naming the generated token')
})

/** Resolves once the process has logged `pattern` `count` times. */
async function logged (server: RunningServer, pattern: RegExp, count: number): Promise<void> {
  const { value } = await retryUntil(async () => server.stdout.filter((line) => pattern.test(line)).length, (n) => n >= count, 5000, 10)
  if (value < count) throw new Error(`${pattern} logged ${value} times, not ${count}`)
}

t.test('SIGHUP reloads the tokens file while clients keep requesting: none of them fails', async (t) => {
  const file = writeTokens(`${t.testdir()}/tokens.json`, [keeper, leaving])
  const server = await startServer(t, { API_TOKENS_FILE: file })
  const status = async (token: { value: string }) => (await server.request('GET', '/plants', { token: token.value })).statusCode

  // Four clients keep requesting with the token that stays, through every reload.
  const done = new AbortController()
  const answers: number[] = []
  const clients = Array.from({ length: 4 }, async (_, i) => {
    for (let n = 0; !done.signal.aborted; n++) {
      answers.push((await server.request('POST', '/plants', { token: keeper.value, body: { id: i * 1_000_000 + n, name: 'p' } })).statusCode)
    }
  })
  await sleep(200)

  t.equal(await status(newcomer), 401, 'the newcomer is not known yet')
  writeTokens(file, [keeper, leaving, newcomer])
  server.child.kill('SIGHUP')
  await logged(server, /API_TOKENS_FILE reloaded/, 1)
  t.equal(await status(newcomer), 200, 'a new token works at once')

  writeTokens(file, [keeper, newcomer])
  server.child.kill('SIGHUP')
  await logged(server, /API_TOKENS_FILE reloaded/, 2)
  t.equal(await status(leaving), 401, 'a removed token answers 401 at once')

  writeTokens(file, 'not json')
  server.child.kill('SIGHUP')
  const refused = JSON.parse(await waitForLine(server.stdout, /API_TOKENS_FILE not reloaded/))
  t.equal(refused.level, 50, 'logged as an error')
  t.match(refused.err.message, `${file} is not JSON`, 'with the cause')
  t.same([await status(keeper), await status(newcomer), await status(leaving)], [200, 200, 401], 'the previous tokens stay in force')

  await sleep(200)
  done.abort()
  await Promise.all(clients)
  t.ok(answers.length > 20, `${answers.length} requests made meanwhile`)
  t.same(answers.filter((code) => code !== 200), [], 'every one of them answered 200')
  t.equal(server.child.exitCode, null, 'SIGHUP does not stop the service')

  await logsArrived(server)
  const lines = server.stdout.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request completed')
  t.ok(lines.filter((line) => line.method === 'POST').every((line) => line.token === 'keeper'), 'each request\'s line names its token')
  t.ok(lines.some((line) => line.status === 401 && line.token === undefined), 'an unknown token is named by no line')
  const reloads = server.stdout.filter((line) => /API_TOKENS_FILE reloaded/.test(line)).map((line) => JSON.parse(line).tokens)
  t.same(reloads, [['keeper', 'leaving', 'newcomer'], ['keeper', 'newcomer']], 'each reload names the tokens in force')
  const everything = [...server.stdout, ...server.stderr].join('\n')
  for (const token of [keeper, leaving, newcomer]) t.notOk(everything.includes(token.value), `the value of ${token.name} is in no line`)
})

t.test('a request authenticated before a reload goes on even if the reload removed its token', async (t) => {
  const file = writeTokens(`${t.testdir()}/tokens.json`, [keeper, departing])
  const server = await startServer(t, { API_TOKENS_FILE: file })
  const body = JSON.stringify({ id: 1, name: 'Basil' })
  const head = `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${departing.value}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`
  // The headers now, the body once the token is gone: the request was decided on its headers.
  const answer = server.send([head, body], { gapMs: 1500 })
  await sleep(300)
  writeTokens(file, [keeper])
  server.child.kill('SIGHUP')
  await logged(server, /API_TOKENS_FILE reloaded/, 1)
  t.equal((await server.request('DELETE', '/plants/1', { token: departing.value })).statusCode, 401, 'a new request with it is refused')
  const { text } = await answer
  t.match(text, /^HTTP\/1\.1 200 /, 'the request in flight is answered as its token allowed when it arrived')
  t.match(text, /\{"name":"Basil"\}$/)
})

/** Whether the process has this file open: /proc lists where each of its descriptors leads. */
function holdsOpen (pid: number, file: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === file
      } catch {
        return false // closed meanwhile
      }
    })
  } catch {
    return false // gone
  }
}

t.test('SIGHUPs while the service starts neither kill it nor are lost', async (t) => {
  const dir = t.testdir()
  const file = writeTokens(`${dir}/tokens.json`, [keeper])
  const database = `${dir}/plants.db`
  const started = new AbortController()
  // From the moment the process has opened its database, one every 10 ms until it
  // listens: they land while it migrates the store and builds its routes. (Whether the
  // process catches SIGHUP says too little: a test runner's signal-exit catches it early,
  // and ends the process with it when it is the only one listening.)
  const storm = async (child: ChildProcess): Promise<number> => {
    while (!holdsOpen(child.pid!, database)) {
      if (child.exitCode !== null || child.signalCode !== null) return 0
      await sleep(1)
    }
    writeTokens(file, [keeper, newcomer])
    let sent = 0
    while (!started.signal.aborted && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGHUP')
      sent++
      await sleep(10)
    }
    return sent
  }
  let sending: Promise<number> = Promise.resolve(0)
  const server = await startServer(t, { API_TOKENS_FILE: file, DATABASE_URL: `sqlite:${database}` }, { spawned: (child) => { sending = storm(child) } })
  started.abort()
  const sent = await sending
  t.ok(sent >= 3, `${sent} SIGHUPs came while it started`)
  t.equal((await server.request('GET', '/plants', { token: newcomer.value })).statusCode, 200, 'the file written while it started is in force')
  t.equal((await server.request('GET', '/plants', { token: keeper.value })).statusCode, 200)
  t.equal(server.child.exitCode, null, 'and it runs')
})

t.test('SIGHUP with the tokens file turned into a named pipe nobody writes to: refused at once, the service answers meanwhile', async (t) => {
  const dir = t.testdir()
  const file = writeTokens(`${dir}/tokens.json`, [keeper])
  const server = await startServer(t, { API_TOKENS_FILE: file })
  // Read whole, the pipe held the event loop (and SIGTERM with it) until someone wrote to it.
  rmSync(file)
  execFileSync('mkfifo', [file])
  server.child.kill('SIGHUP')
  const line = JSON.parse(await waitForLine(server.stdout, /API_TOKENS_FILE not reloaded/))
  t.match(line.err.message, 'is not a regular file', 'logged with the reason')
  const health = await Promise.race([server.request('GET', '/health'), sleep(2000).then(() => undefined)])
  t.equal(health?.statusCode, 200, 'and the service answers')
  t.equal((await server.request('GET', '/plants', { token: keeper.value })).statusCode, 200, 'with the tokens it had')
})

t.test('SIGHUP without a tokens file keeps the service and its tokens', async (t) => {
  const server = await startServer(t, { API_TOKENS: 'test-token-0123456789' })
  server.child.kill('SIGHUP')
  t.match(JSON.parse(await waitForLine(server.stdout, /no API_TOKENS_FILE to reload/)), { level: 40 })
  t.equal((await server.request('GET', '/plants')).statusCode, 200)
  t.equal(server.child.exitCode, null)
})
