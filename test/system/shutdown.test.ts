import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { assertError, TOKEN } from '../helpers/app.ts'
import { ackedPlantsSurvive } from '../helpers/acked-writes.ts'
import { CREATE_HEAD, startServer, waitForLine } from '../helpers/server.ts'

t.test('SIGTERM in the middle of a burst: in-flight creates are committed and answered, exit 0', async (t) => {
  const env = { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${t.testdir()}/plants.db` }
  const server = await startServer(t, env)
  // The restarted service's reads check what survived: a busy machine's overload 503 is no answer.
  const restart = async () => await startServer(t, { ...env, MAX_EVENT_LOOP_DELAY_MS: '0' })
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

t.test('SHUTDOWN_DELAY_MS: after a SIGTERM the service serves on, not ready and closing each connection after its answer, for the delay; then it stops as usual', async (t) => {
  const delayMs = 1500
  const env = { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${t.testdir()}/plants.db` }
  const server = await startServer(t, { ...env, SHUTDOWN_DELAY_MS: String(delayMs) })
  t.equal((await server.request('POST', '/plants', { body: { id: 1, name: 'Fern' } })).statusCode, 200)
  const signalled = performance.now()
  server.child.kill('SIGTERM')
  await waitForLine(server.stdout, /shutting down/)
  const ready = await server.request('GET', '/health/ready')
  assertError(t, ready, 503, 'shutting_down')
  const read = await server.request('GET', '/plants/1')
  const create = await server.request('POST', '/plants', { body: { id: 2, name: 'Moss' } })
  const alive = await server.request('GET', '/health')
  const servedBy = performance.now() - signalled
  t.same([read.statusCode, create.statusCode, alive.statusCode], [200, 200, 200], `served after the SIGTERM, within ${Math.round(servedBy)} ms`)
  t.ok(servedBy < delayMs, 'all within the delay')
  t.same([ready, read, create, alive].map((answer) => answer.headers.connection), ['close', 'close', 'close', 'close'], 'each answer closes its connection: the client reconnects, elsewhere')
  t.equal(await server.exited, 0, 'exit code 0')
  const exitedAfter = performance.now() - signalled
  t.ok(exitedAfter >= delayMs, `exited ${Math.round(exitedAfter)} ms after the SIGTERM, once the delay had passed`)
  t.ok(server.stdout.some((line) => line.includes(`"delayMs":${delayMs}`)), 'the delay is logged')

  const restarted = await startServer(t, env)
  t.equal((await restarted.request('GET', '/plants/2')).statusCode, 200, 'the create made during the delay was kept')
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

// A create of exactly the 100 bytes CREATE_HEAD announces.
const createBody = (id: number): string => JSON.stringify({ id, name: `Plant ${id}` }).padEnd(100)

t.test('connections with no request in flight do not hold a shutdown: a silent one and a half-sent request are closed at once, the request in flight is answered, exit 0', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN })
  // Node stopped the header deadline of both at the close, and counted neither as idle:
  // each held the close for all of SHUTDOWN_GRACE_MS (10 s), then the process exited 1.
  const silent = server.send([])
  const halfSent = server.send(['GET /health HTTP/1.1\r\nHo'])
  const body = createBody(1)
  const inFlight = server.send([`${CREATE_HEAD}${body.slice(0, 10)}`, body.slice(10)], { gapMs: 600 })
  await sleep(200)
  const signalled = Date.now()
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0, 'exit code 0')
  const ms = Date.now() - signalled
  t.ok(ms < 2000, `exited ${ms} ms after the SIGTERM, once the answer in flight was out`)
  const [silentEnd, halfSentEnd, answered] = await Promise.all([silent, halfSent, inFlight])
  t.same([silentEnd.text, halfSentEnd.text], ['', ''], 'closed unanswered')
  t.ok(silentEnd.ms < 600 && halfSentEnd.ms < 600, `closed at the SIGTERM, without waiting for the request in flight: ${silentEnd.ms} and ${halfSentEnd.ms} ms`)
  t.match(answered.text, /^HTTP\/1.1 200 OK\r\n/, 'the request in flight is answered')
  t.match(answered.text, /\r\nconnection: close\r\n/i, 'with Connection: close')
})

t.test('a request arriving behind one in flight while the service closes is not handled, and the answer in flight ends the connection', async (t) => {
  const env = { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${t.testdir()}/plants.db` }
  const server = await startServer(t, env)
  const first = createBody(1)
  const sent = server.send([`${CREATE_HEAD}${first.slice(0, 10)}`, `${first.slice(10)}${CREATE_HEAD}${createBody(2)}`], { gapMs: 500 })
  await sleep(200)
  server.child.kill('SIGTERM')
  const { text } = await sent
  const answers = text.split(/(?=HTTP\/1\.1 \d{3} )/)
  t.equal(answers.length, 1, 'one answer, then the connection is closed')
  t.match(answers[0], /^HTTP\/1.1 200 OK\r\n/, 'the create in flight is answered')
  t.match(answers[0].split('\r\n\r\n')[0], /\r\nconnection: close(\r\n|$)/i, 'with Connection: close: the client sends the next request elsewhere')
  t.equal(await server.exited, 0)
  const restarted = await startServer(t, env)
  t.equal((await restarted.request('GET', '/plants/1')).statusCode, 200, 'the create in flight was stored')
  t.equal((await restarted.request('GET', '/plants/2')).statusCode, 404, 'the one behind it was not')
})
