import { connect, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { startServer, type RunningServer } from '../helpers/server.ts'

// Enough connections that an answer waits behind many scrapes, few enough for a shared CI machine.
const CONNECTIONS = 64
// Of them, those scraping with a token: fewer, each answer is the whole exposition.
const HOLDER_CONNECTIONS = 8
const SAMPLES = 25
const PHASE_MS = 1500

const STATUS_LINE = Buffer.from('HTTP/1.1 ')

/**
 * Keeps `connections` keep-alive connections each with one request for `path` in flight,
 * re-sent as each answer starts; looks only for status lines, in the bytes, so the test
 * process stays cheap beside the service. Returns the statuses seen and a stop.
 */
function flood (t: Test, server: RunningServer, path: string, connections: number, token?: string): { statuses: Map<string, number>, stop: () => void } {
  const request = `GET ${path} HTTP/1.1\r\nHost: x\r\n${token === undefined ? '' : `Authorization: Bearer ${token}\r\n`}\r\n`
  const statuses = new Map<string, number>()
  const sockets: Socket[] = []
  for (let i = 0; i < connections; i++) {
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1')
    sockets.push(socket)
    socket.on('error', (err) => { statuses.set(err.message, (statuses.get(err.message) ?? 0) + 1) })
    let tail: Buffer = Buffer.alloc(0)
    socket.on('data', (data: Buffer) => {
      // A status line cut between two reads is found in the last bytes of one and the next.
      const bytes = tail.length === 0 ? data : Buffer.concat([tail, data])
      for (let at = bytes.indexOf(STATUS_LINE); at !== -1 && at + 12 <= bytes.length; at = bytes.indexOf(STATUS_LINE, at + 12)) {
        const status = bytes.toString('latin1', at + 9, at + 12)
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
        socket.write(request)
      }
      tail = bytes.subarray(Math.max(0, bytes.length - 11))
    })
    socket.write(request)
  }
  const stop = (): void => { for (const socket of sockets) socket.destroy() }
  t.teardown(stop)
  return { statuses, stop }
}

/** The median latency of authenticated GET /plants, one after another, over at most PHASE_MS. */
async function listLatency (t: Test, server: RunningServer): Promise<number> {
  const ms: number[] = []
  const statuses = new Set<number>()
  const until = performance.now() + PHASE_MS
  while (ms.length < SAMPLES && (ms.length < 5 || performance.now() < until)) {
    const answer = await server.request('GET', '/plants?limit=10')
    statuses.add(answer.statusCode)
    ms.push(answer.ms)
  }
  t.same([...statuses], [200], 'GET /plants is served')
  ms.sort((a, b) => a - b)
  return ms[Math.floor(ms.length / 2)]
}

t.test('a flood of /metrics scrapes, with and without a token, slows the API no more than a flood of /health does', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN })
  for (let id = 1; id <= 10; id++) await server.request('POST', '/plants', { body: { id, name: `plant ${id}` } })
  // The series of a service that has run a while: a histogram for each method, route and status seen.
  for (const path of ['/plants', '/plants/404', '/plants/x', '/plants?limit=0', '/webhooks', '/webhooks/sub_x', '/webhooks/sub_x/deliveries', '/nope']) {
    for (const method of ['GET', 'POST', 'DELETE', 'PUT', 'PATCH']) {
      for (const token of [TOKEN, null]) await server.request(method, path, { token, body: method === 'POST' ? {} : undefined })
    }
  }
  await listLatency(t, server) // warm up

  const idle = await listLatency(t, server)
  const health = flood(t, server, '/health', CONNECTIONS)
  const duringHealth = await listLatency(t, server)
  health.stop()

  // The attack: scrapes without a token; and a token holder scraping as fast as it can.
  const holder = flood(t, server, '/metrics', HOLDER_CONNECTIONS, TOKEN)
  const strangers = flood(t, server, '/metrics', CONNECTIONS - HOLDER_CONNECTIONS)
  const duringMetrics = await listLatency(t, server)
  strangers.stop()
  holder.stop()

  t.comment(`/metrics: ${(await server.request('GET', '/metrics')).body.length} bytes; GET /plants p50: idle ${idle.toFixed(1)} ms, /health flood ${duringHealth.toFixed(1)} ms, /metrics flood ${duringMetrics.toFixed(1)} ms`)
  t.same([...strangers.statuses.keys()], ['401'], `a scrape without a token is refused: ${JSON.stringify([...strangers.statuses])}`)
  t.same([...holder.statuses.keys()], ['200'], `a scrape with the token is served: ${JSON.stringify([...holder.statuses])}`)
  // Computed at each scrape, the exposition made this 5 to 12 times the /health flood's; cached, 1 to 2.
  t.ok(duringMetrics < 3.5 * Math.max(duringHealth, idle),
    `the /metrics flood (${duringMetrics.toFixed(1)} ms) within 3.5× of the /health flood (${duringHealth.toFixed(1)} ms)`)
})

t.test('scrapes within METRICS_CACHE_MS share one computed answer', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN, METRICS_CACHE_MS: '1000' })
  const scrape = async (): Promise<string> => {
    const answer = await server.request('GET', '/metrics')
    t.equal(answer.statusCode, 200)
    return answer.body
  }
  const first = await scrape()
  const started = performance.now()
  await server.request('GET', '/plants')
  const second = await scrape()
  if (performance.now() - started < 900) t.equal(second, first, 'the same text, though a scrape and a list were counted since')
  await new Promise((resolve) => setTimeout(resolve, 1100))
  const third = await scrape()
  t.not(third, first, 'computed again once the interval has passed')
  t.match(third, /http_request_duration_seconds_count\{method="GET",route="\/plants",status="200"\} 1\n/)
})
