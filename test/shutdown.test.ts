import { connect } from 'node:net'
import t from 'tap'
import { TOKEN } from './helpers/app.js'
import { postTo, startServer } from './helpers/server.js'

const CLIENTS = 32

t.test('SIGTERM in the middle of a burst: in-flight creates are committed and answered, exit 0', async (t) => {
  const env = { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${t.testdir()}/plants.db` }
  const server = await startServer(t, env)
  const acked: number[] = []
  const statuses = new Map<number, number>()
  const clients = Array.from({ length: CLIENTS }, async (_, client) => {
    for (let i = 0; ; i++) {
      const id = client * 10_000_000 + i
      try {
        const res = await postTo(server.url, { id, name: `plant ${id}` })
        const body = await res.json() as { error?: number }
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        if (res.status === 200) acked.push(id)
        else if (res.status !== 503 || body.error !== 503) throw new Error(`unexpected ${res.status}`)
      } catch (err) {
        if ((err as Error).message.startsWith('unexpected')) throw err
        return // the server stopped accepting: this request was never acknowledged
      }
    }
  })
  while (acked.length < 500) await new Promise((resolve) => setTimeout(resolve, 5))
  server.child.kill('SIGTERM')
  await Promise.all(clients)
  t.equal(await server.exited, 0, 'exit code 0')
  t.same([...statuses.keys()].filter((s) => s !== 200 && s !== 503), [], `only 200 and 503: ${JSON.stringify([...statuses])}`)
  t.ok(server.stdout.some((line) => line.includes('shutting down')), 'the shutdown is logged')

  const restarted = await startServer(t, env)
  const missing: number[] = []
  for (let i = 0; i < acked.length; i += 100) {
    const found = await Promise.all(acked.slice(i, i + 100).map(async (id) =>
      (await fetch(`${restarted.url}/plants/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } })).status))
    found.forEach((status, j) => { if (status !== 200) missing.push(acked[i + j]) })
  }
  t.same(missing, [], `all ${acked.length} acknowledged plants are stored`)
})

t.test('a shutdown that outlasts SHUTDOWN_GRACE_MS exits non-zero', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN, SHUTDOWN_GRACE_MS: '300' })
  const { port } = new URL(server.url)
  // A request whose body never completes keeps the server from closing.
  const socket = connect(Number(port), '127.0.0.1')
  socket.on('error', () => {})
  t.teardown(() => { socket.destroy() })
  socket.write(`POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":`)
  await new Promise((resolve) => setTimeout(resolve, 200))
  const started = Date.now()
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 1, 'exit code 1')
  t.ok(Date.now() - started < 2000, 'soon after the grace delay')
})

t.test('a request arriving while the service closes answers 503 in the Error shape', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN })
  const { port } = new URL(server.url)
  const open = (): { socket: ReturnType<typeof connect>, answer: () => string } => {
    const socket = connect(Number(port), '127.0.0.1')
    let answer = ''
    socket.on('data', (data) => { answer += data })
    socket.on('error', () => {})
    t.teardown(() => { socket.destroy() })
    return { socket, answer: () => answer }
  }
  // One request in flight holds the close open; another has only begun its headers.
  const inFlight = open()
  inFlight.socket.write(`POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`)
  const late = open()
  late.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n')
  await new Promise((resolve) => setTimeout(resolve, 200))
  server.child.kill('SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 300))
  late.socket.write('\r\n')
  await new Promise((resolve) => late.socket.on('close', resolve))
  t.match(late.answer(), /^HTTP\/1.1 503 Service Unavailable/)
  t.match(late.answer(), /connection: close/i)
  t.match(late.answer(), /\{"error":503,"message":"the service is shutting down; retry on another instance"\}$/)
  inFlight.socket.destroy()
  t.equal(await server.exited, 0)
})
