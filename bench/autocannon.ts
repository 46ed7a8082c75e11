/**
 * The fallback load generator, for machines without wrk: the same job as
 * bench/request.lua, run as its own process by bench/load.ts (so it can be pinned to
 * its own core), printing the same BENCH_RESULT line. Its one argument is the JSON
 * of load.ts's LoadOptions plus connections, seconds, token and timeoutSeconds.
 */
import { Agent, request as httpRequest } from 'node:http'
import { createRequire } from 'node:module'

interface Options {
  port: number
  request: { method: string, path: string, body?: string, ids?: string }
  base: number
  cycle?: number
  total?: number
  seconds: number
  connections: number
  token: string
  timeoutSeconds: number
}

interface AutocannonResult {
  requests: { total: number }
  latency: { p50: number, p99: number, max: number }
  duration: number
  non2xx: number
  errors: number
  timeouts: number
}

interface AutocannonRequest { method: string, path: string, headers: Record<string, string>, body?: string }

type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>

const options: Options = JSON.parse(process.argv[2] ?? '{}')
const headers: Record<string, string> = { authorization: `Bearer ${options.token}` }
if (options.request.body !== undefined) headers['content-type'] = 'application/json'

const withId = (template: string, id: number): string => template.replaceAll('{id}', String(id))

// As request.lua: a cycle's ids are visited in a scattered order (see SCATTER there).
const SCATTER = 1000003
let n = 0
function nextId (): number {
  const i = n++
  return options.cycle === undefined ? options.base + i : options.base + (i % options.cycle * SCATTER) % options.cycle
}

interface Summary {
  requests: number
  duration_us: number
  p50_us: number
  p99_us: number
  max_us: number
  status_errors: number
  connect_errors: number
  read_errors: number
  write_errors: number
  timeouts: number
}

async function timed (): Promise<Summary> {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon
  const result = await autocannon({
    url: `http://127.0.0.1:${options.port}`,
    connections: options.connections,
    duration: options.seconds,
    timeout: options.timeoutSeconds,
    method: options.request.method,
    headers,
    requests: [{
      // Called for every request, so each gets its own id.
      setupRequest: (req: AutocannonRequest) => {
        const id = nextId()
        return {
          ...req,
          path: withId(options.request.path, id),
          ...(options.request.body === undefined ? {} : { body: withId(options.request.body, id) })
        }
      }
    }]
  })
  return {
    requests: result.requests.total,
    duration_us: Math.round(result.duration * 1e6),
    p50_us: Math.round(result.latency.p50 * 1000),
    p99_us: Math.round(result.latency.p99 * 1000),
    max_us: Math.round(result.latency.max * 1000),
    status_errors: result.non2xx,
    connect_errors: result.errors - result.timeouts,
    read_errors: 0,
    write_errors: 0,
    timeouts: result.timeouts
  }
}

/**
 * A fill with node:http rather than autocannon: autocannon builds one request per
 * connection that it never sends, which would leave gaps in ids that reads of the
 * prefill then miss. Here every id base..base+total-1 is sent exactly once.
 */
async function fill (total: number): Promise<Summary> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections })
  const latencies: number[] = []
  let statusErrors = 0
  let socketErrors = 0
  const started = process.hrtime.bigint()
  const send = async (id: number): Promise<void> => await new Promise((resolve) => {
    const body = options.request.body === undefined ? undefined : withId(options.request.body, id)
    const t0 = process.hrtime.bigint()
    const req = httpRequest({
      host: '127.0.0.1',
      port: options.port,
      agent,
      method: options.request.method,
      path: withId(options.request.path, id),
      headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) }
    }, (res) => {
      res.resume()
      res.once('end', () => {
        latencies.push(Number(process.hrtime.bigint() - t0) / 1000)
        if ((res.statusCode ?? 0) >= 400) statusErrors++
        resolve()
      })
    })
    req.once('error', () => { socketErrors++; resolve() })
    req.end(body)
  })
  let sent = 0
  await Promise.all(Array.from({ length: options.connections }, async () => {
    while (sent < total) {
      sent++
      await send(nextId())
    }
  }))
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const at = (q: number): number => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0)
  return {
    requests: latencies.length,
    duration_us: Math.round(Number(process.hrtime.bigint() - started) / 1000),
    p50_us: at(0.5),
    p99_us: at(0.99),
    max_us: at(1),
    status_errors: statusErrors,
    connect_errors: socketErrors,
    read_errors: 0,
    write_errors: 0,
    timeouts: 0
  }
}

const summary = options.total === undefined ? await timed() : await fill(options.total)
process.stdout.write(`BENCH_RESULT ${JSON.stringify(summary)}\n`)
