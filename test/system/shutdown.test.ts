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
  // After the delay the service closes: an answer at all is one within it.
  t.same([read.statusCode, create.statusCode, alive.statusCode], [200, 200, 200], `served after the SIGTERM, within ${Math.round(servedBy)} ms`)
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
  // Answered once the service has read the request before it.
  await server.request('GET', '/health', { token: null })
  server.child.kill('SIGTERM')
  // Unbounded, the close would wait for the body until REQUEST_TIMEOUT_MS and then exit 0.
  t.equal(await server.exited, 1, 'exit code 1: cut off at the grace delay')
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
  const { promise: bodyDue, resolve: sendBody } = Promise.withResolvers<void>()
  const inFlight = server.send([`${CREATE_HEAD}${body.slice(0, 10)}`, body.slice(10)], { next: async () => await bodyDue })
  // Answered once the service has read what came before it on the other connections.
  await server.request('GET', '/health', { token: null })
  server.child.kill('SIGTERM')
  // Held until the request in flight is answered, they would wait for ever: it waits for them.
  const [silentEnd, halfSentEnd] = await Promise.all([silent, halfSent])
  t.same([silentEnd.text, halfSentEnd.text], ['', ''], 'closed unanswered, while the request in flight still waits for its body')
  sendBody()
  const answered = await inFlight
  t.match(answered.text, /^HTTP\/1.1 200 OK\r\n/, 'the request in flight is answered')
  t.match(answered.text, /\r\nconnection: close\r\n/i, 'with Connection: close')
  // Held for SHUTDOWN_GRACE_MS, it would have exited 1.
  t.equal(await server.exited, 0, 'exit code 0, once the answer in flight was out')
})

t.test('a request arriving behind one in flight while the service closes is not handled, and the answer in flight ends the connection', async (t) => {
  const env = { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${t.testdir()}/plants.db` }
  const server = await startServer(t, env)
  const first = createBody(1)
  const { promise: restDue, resolve: sendRest } = Promise.withResolvers<void>()
  const sent = server.send([`${CREATE_HEAD}${first.slice(0, 10)}`, `${first.slice(10)}${CREATE_HEAD}${createBody(2)}`], { next: async () => await restDue })
  // Answered once the service has read the head before it; the rest follows the SIGTERM.
  await server.request('GET', '/health', { token: null })
  server.child.kill('SIGTERM')
  await waitForLine(server.stdout, /shutting down/)
  sendRest()
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
