import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { TOKEN } from './helpers/app.js'
import { ackedPlantsSurvive } from './helpers/acked-writes.js'
import { CREATE_HEAD, startServer } from './helpers/server.js'

t.test('SIGTERM in the middle of a burst: in-flight creates are committed and answered, exit 0', async (t) => {
  const env = { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${t.testdir()}/plants.db` }
  const server = await startServer(t, env)
  const restart = async () => await startServer(t, env)
  const { refused } = await ackedPlantsSurvive(t, [server], { clients: 32, ackedBefore: 500, signal: 'SIGTERM', restart })
  t.equal(await server.exited, 0, 'exit code 0')
  t.same([...refused.keys()].filter((answer) => !/^503 \{"error":503,/.test(answer)), [],
    `only 200 and 503 in the Error shape: ${JSON.stringify([...refused])}`)
  t.ok(server.stdout.some((line) => line.includes('shutting down')), 'the shutdown is logged')
})

t.test('the log is written asynchronously, yet no line is lost: each answered request has its line after a SIGTERM', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN })
  const answers = await Promise.all(Array.from({ length: 200 }, async (_, i) =>
    await server.request('POST', '/plants', { body: { id: i + 1, name: `Plant ${i + 1}` } })))
  t.ok(answers.every((answer) => answer.statusCode === 200), 'all created')
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  const lines = server.stdout.filter((line) => line.includes('"route":"/plants"'))
  t.equal(lines.length, 200, 'one line per request, none held back in the buffer')
  t.ok(lines.every((line) => JSON.parse(line).status === 200), 'each a whole JSON line')
})

t.test('a shutdown that outlasts SHUTDOWN_GRACE_MS exits non-zero', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN, SHUTDOWN_GRACE_MS: '300' })
  // A request whose body never completes keeps the server from closing.
  server.send([`${CREATE_HEAD}{"id":`])
  await sleep(200)
  const started = Date.now()
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 1, 'exit code 1')
  t.ok(Date.now() - started < 2000, 'soon after the grace delay')
})

t.test('a request arriving while the service closes answers 503 in the Error shape', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN })
  // One request in flight holds the close open; another has only begun its headers.
  const inFlight = new AbortController()
  server.send([`${CREATE_HEAD}{`], { signal: inFlight.signal })
  const late = server.send(['GET /health HTTP/1.1\r\nHost: x\r\n', '\r\n'], { gapMs: 500 })
  await sleep(200)
  server.child.kill('SIGTERM')
  const { text } = await late
  t.match(text, /^HTTP\/1.1 503 Service Unavailable/)
  t.match(text, /connection: close/i)
  t.match(text, /\{"error":503,"message":"the service is shutting down; retry on another instance","code":"shutting_down"\}$/)
  inFlight.abort()
  t.equal(await server.exited, 0)
})
