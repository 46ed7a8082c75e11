/**
 * Measuring one scenario: its server started in a fresh temp dir (pinned to core 0), the prefill, a warm-up
 * thrown away, then a run of wrk (pinned to core 1, bench/request.lua) with the server's CPU and memory around it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Pool } from 'undici'
import { freePort } from '../test/helpers/free-port.ts'
import { createPlant, fail, ROOT, settings, type Build, type RequestSpec, type Scenario } from './scenarios.ts'

export const TOKEN = `bench-${randomBytes(12).toString('base64url')}`

// Two cores or more: the server on core 0, wrk on core 1, so neither takes the other's cycles.
export const pinned = spawnSync('taskset', ['-V']).status === 0 && availableParallelism() >= 2
const onCore = (core: number, argv: string[]): string[] => pinned ? ['taskset', '-c', String(core), ...argv] : argv

const WRK = spawnSync('wrk', ['-v'], { encoding: 'utf8' })
export function wrkVersion (): string {
  if (WRK.error !== undefined) fail('wrk is not installed: apt-get install -y wrk (Debian, Ubuntu), brew install wrk (macOS)')
  return /^wrk (\S+)/.exec(WRK.stdout)?.[1] ?? 'unknown'
}

/** What request.lua's BENCH_RESULT line reports; errors are answers of 400 or more, and failed connections, reads, writes and timeouts. */
interface LoadResult { requests: number, durationUs: number, p50Us: number, p99Us: number, errors: number }

/** A scenario's measured run: wrk's figures, and the server's around them. */
export interface Row {
  name: string
  requestsPerSecond: number
  p50Us: number
  p99Us: number
  /** Requests not answered 2xx or 3xx: any makes the row invalid. */
  errors: number
  /** CPU time over the run, as a share of one core: the server's, and wrk's. */
  cpu: { server: number, load: number }
  rssKb: number
  /** Deliveries received during the run, and still pending after it (NaN: not in /metrics). */
  webhooks?: { received: number, pending: number }
  /** BENCH_PROFILE: the server's CPU profile, and the measured run's requests and window in it. */
  profile?: { dir: string, requests: number, fromMs: number, toMs: number }
}

// Servers and wrk still running when the bench exits, however it does.
const children = new Set<ChildProcess>()
process.on('exit', () => { for (const child of children) child.kill('SIGKILL') })
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130))

/** A local HTTP server that reads each request and answers 200 at once, counting them: a webhook receiver, or an OTLP collector that drops what it takes. */
async function sink (): Promise<{ url: string, received: () => number, close: () => void }> {
  let received = 0
  const server = createServer((req, res) => { req.resume().once('end', () => { received++; res.end() }) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  server.unref()
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received: () => received, close: () => { server.closeAllConnections(); server.close() } }
}

// BENCH_TRACING: every service exports all its spans (OTLP/HTTP protobuf, the SDK's defaults) to one sink.
const tracing = settings.tracing ? sink().then(({ url }) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_TRACES_SAMPLER: 'always_on' })) : {}

export type Server = Awaited<ReturnType<typeof startServer>>

/**
 * Runs `argv` (a service, or bare Fastify) on a free port with the bench's token, its log into the file
 * `log` (as in production: the kernel really copies every line), pinned to `core` if given; resolves once
 * it is ready: the service answers 200 once its store is (503 before), bare Fastify 401. With taskset the
 * child execs node, so its pid is the server's own. `call` sends a request with the token over a pool of
 * its own; `stop` closes the pool and the server (SIGTERM, SIGKILL after 10 s).
 */
export async function startServer (argv: string[], env: Record<string, string>, log: string, core?: number) {
  const url = `http://127.0.0.1:${await freePort()}`
  const out = openSync(log, 'w')
  const [command, ...args] = core === undefined ? argv : onCore(core, argv)
  const spawnedAt = performance.now()
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', out, out], env: { ...process.env, HOST: '127.0.0.1', PORT: new URL(url).port, API_TOKENS: TOKEN, LOG_LEVEL: 'info', ...env } })
  children.add(child)
  closeSync(out)
  const pool = new Pool(url, { connections: settings.connections })
  const stop = async (): Promise<void> => {
    await pool.destroy()
    if (child.exitCode !== null || child.signalCode !== null) return
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    child.kill('SIGTERM')
    await once(child, 'exit')
    clearTimeout(timer)
  }
  const call = async (method: string, path: string, body?: string): Promise<{ status: number, text: string }> => {
    const headers = { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }
    const { statusCode, body: answer } = await pool.request({ method, path, headers, body })
    return { status: statusCode, text: await answer.text() }
  }
  for (const deadline = Date.now() + 60_000; ; await sleep(50)) {
    const failed = child.exitCode !== null || child.signalCode !== null ? `exited (${child.exitCode ?? child.signalCode})` : Date.now() > deadline ? 'was not ready within 60 s' : undefined
    if (failed !== undefined) {
      await stop()
      fail(`the server ${failed}:\n${tail(log)}`)
    }
    if (await fetch(`${url}/health/ready`).then((res) => res.status !== 503, () => false)) return { child, url, log, spawnedAt, call, stop }
  }
}

const tail = (path: string): string => readFileSync(path, 'utf8').trimEnd().split('\n').slice(-15).join('\n')

/** user + system CPU ticks of a process, from /proc (Linux, 100 ticks a second); `children`: of its children waited for. */
function cpuTicks (pid: number | 'self', children = false): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return children ? Number(fields[13]) + Number(fields[14]) : Number(fields[11]) + Number(fields[12])
}

const rssKb = (pid: number): number => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN)

async function wrk (url: string, request: RequestSpec, seconds: number, ids: { base: number, cycle?: number }): Promise<LoadResult> {
  const args = [`token=${TOKEN}`, `method=${request.method}`, `path=${request.path}`, `threads=${settings.threads}`, `base=${ids.base}`]
  if (request.body !== undefined) args.push(`body=${request.body}`)
  if (ids.cycle !== undefined) args.push(`cycle=${ids.cycle}`)
  const [command, ...argv] = onCore(1, ['wrk', '-t', String(settings.threads), '-c', String(settings.connections), '-d', `${seconds}s`,
    '--timeout', '10s', '-s', join(ROOT, 'bench', 'request.lua'), url, '--', ...args])
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let output = ''
  for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk: Buffer) => { output += chunk })
  await once(child, 'close')
  const line = output.split('\n').find((l) => l.startsWith('BENCH_RESULT '))
  if (line === undefined) fail(`wrk printed no result:\n${output.slice(-2000)}`)
  return JSON.parse(line.slice('BENCH_RESULT '.length))
}

// Every run takes its fresh ids (and `{n}`s) from a block of its own, so a run never repeats a warm-up's:
// a create retried, or an update to the same name, would write nothing. The first block is random, so a
// PostgreSQL database that outlives the bench gets fresh ids too. Below 2^53, wrk's Lua doubles are exact.
let nextBlock = randomInt(1, 8_000_000)
const idBlock = (): number => 1e9 * nextBlock++

/** Plants 1..count, each created once, over settings.connections connections. */
async function prefill (server: Server, count: number): Promise<void> {
  let next = 1
  await Promise.all(Array.from({ length: settings.connections }, async () => {
    for (let id = next++; id <= count; id = next++) {
      const { status } = await server.call('POST', '/plants', createPlant.body!.replace('{id}', String(id)))
      if (status !== 200) fail(`the prefill's POST /plants of id ${id} answered ${status}`)
    }
  }))
}

export async function runScenario (scenario: Scenario, build: Build, root: string): Promise<Row> {
  const dir = join(root, `${scenario.name.replace(/[^\w.-]+/g, '_')}-${randomBytes(3).toString('hex')}`)
  mkdirSync(dir, { recursive: true })
  process.stderr.write(`bench: ${scenario.name}${scenario.server === 'framework' ? '' : ` (${build.name})`}\n`)
  const profiling = settings.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(dir, 'profile')}`] : []
  const server = scenario.server === 'framework'
    ? await startServer([process.execPath, ...profiling, '--import', 'tsx', join(ROOT, 'bench', 'framework.ts')], {}, join(dir, 'server.log'), 0)
    : await startServer([process.execPath, ...build.flags, ...profiling, build.entry], { ...await tracing, ...scenario.server(dir) }, join(dir, 'server.log'), 0)
  const receiver = scenario.webhook === true ? await sink() : undefined
  try {
    if (scenario.prefill !== undefined) await prefill(server, scenario.prefill)
    if (receiver !== undefined) {
      const { status, text } = await server.call('POST', '/webhooks', JSON.stringify({ url: `${receiver.url}/hook` }))
      if (status !== 201) fail(`cannot subscribe the bench's receiver: ${status} ${text}`)
    }
    const ids = (): { base: number, cycle?: number } => ({ base: idBlock(), cycle: scenario.request.existing === true ? scenario.prefill : undefined })
    if (settings.warmupSeconds > 0) await wrk(server.url, scenario.request, settings.warmupSeconds, ids())
    // wrk is the only child that exits during a run: the bench's children's CPU is wrk's.
    const [ticks, loadTicks, received, started] = [cpuTicks(server.child.pid!), cpuTicks('self', true), receiver?.received() ?? 0, performance.now()]
    const result = await wrk(server.url, scenario.request, settings.seconds, ids())
    const ended = performance.now()
    if (server.child.exitCode !== null || server.child.signalCode !== null) fail(`the server exited during the run:\n${tail(server.log)}`)
    const seconds = (ended - started) / 1000
    const row: Row = {
      name: scenario.name,
      requestsPerSecond: result.durationUs > 0 ? result.requests / (result.durationUs / 1e6) : 0,
      p50Us: result.p50Us,
      p99Us: result.p99Us,
      errors: result.errors,
      cpu: { server: (cpuTicks(server.child.pid!) - ticks) / 100 / seconds, load: (cpuTicks('self', true) - loadTicks) / 100 / seconds },
      rssKb: rssKb(server.child.pid!),
      webhooks: receiver === undefined ? undefined : { received: receiver.received() - received, pending: Number(/^plant_store_webhook_deliveries_pending (\S+)/m.exec((await server.call('GET', '/metrics')).text)?.[1]) }
    }
    if (settings.profile) row.profile = { dir: join(dir, 'profile'), requests: result.requests, fromMs: started - server.spawnedAt, toMs: ended - server.spawnedAt }
    return row
  } finally {
    await server.stop()
    receiver?.close()
  }
}
