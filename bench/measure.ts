/**
 * Measuring one scenario: its server started in a fresh temp dir (pinned to core 0), the prefill,
 * a warm-up that is thrown away, then BENCH_RUNS runs of wrk (pinned to core 1), each with the
 * server's CPU, RSS and log bytes around it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import { closeSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Pool } from 'undici'
import { freePort } from '../test/helpers/free-port.ts'
import { tracingEnv } from './otlp-sink.ts'
import { attribute } from './profile.ts'
import { rps, type LoadResult, type Row } from './results.ts'
import { createPlant, fail, ROOT, settings, type Build, type RequestSpec, type Scenario } from './scenarios.ts'

export const TOKEN = `bench-${randomBytes(12).toString('base64url')}`

// Two cores or more: the server on core 0, wrk on core 1, so neither takes the other's cycles.
const TASKSET = spawnSync('taskset', ['-V']).status === 0
export const pinned = TASKSET && availableParallelism() >= 2
const onCore = (core: number, argv: string[]): string[] => pinned ? ['taskset', '-c', String(core), ...argv] : argv

const WRK = spawnSync('wrk', ['-v'], { encoding: 'utf8' })
export function wrkVersion (): string {
  if (WRK.error !== undefined) fail('wrk is not installed: apt-get install -y wrk (Debian, Ubuntu), brew install wrk (macOS)')
  return /^wrk (\S+)/.exec(WRK.stdout)?.[1] ?? 'unknown'
}

const children = new Set<ChildProcess>()
process.on('exit', () => { for (const child of children) child.kill('SIGKILL') })
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130))

function track (child: ChildProcess): ChildProcess {
  children.add(child)
  child.once('exit', () => children.delete(child))
  return child
}

interface Server { child: ChildProcess, pid: number, port: number, log: string, spawnedAt: number }

async function startServer (scenario: Scenario, build: Build, dir: string): Promise<Server> {
  const port = await freePort()
  const log = join(dir, 'server.log')
  const out = openSync(log, 'w')
  const profiling = settings.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(dir, 'profile')}`] : []
  const argv = scenario.server === 'framework'
    ? [process.execPath, ...profiling, '--import', 'tsx', join(ROOT, 'bench', 'framework.ts')]
    : [process.execPath, ...build.flags, ...profiling, build.entry]
  const env = scenario.server === 'framework' ? {} : scenario.server(dir)
  const [command, ...args] = onCore(0, argv)
  const spawnedAt = performance.now()
  // Logs go to a file, as in production: the kernel really copies every line.
  const child = track(spawn(command, args, {
    cwd: ROOT,
    stdio: ['ignore', out, out],
    env: { ...process.env, ...await tracingEnv(), HOST: '127.0.0.1', PORT: String(port), API_TOKENS: TOKEN, LOG_LEVEL: 'info', ...env }
  }))
  closeSync(out)
  for (const deadline = Date.now() + 30_000; ; await sleep(50)) {
    if (child.exitCode !== null || child.signalCode !== null) fail(`the server exited (${child.exitCode ?? child.signalCode}) before answering:\n${tail(log)}`)
    if (Date.now() > deadline) {
      await stop(child)
      fail(`the server did not answer within 30 s:\n${tail(log)}`)
    }
    try {
      await fetch(`http://127.0.0.1:${port}/`)
      break
    } catch {}
  }
  // With taskset the child execs node, so its pid is the server's own.
  return { child, pid: child.pid!, port, log, spawnedAt }
}

const tail = (path: string): string => readFileSync(path, 'utf8').trimEnd().split('\n').slice(-15).join('\n')

async function stop (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}

/** user + system CPU ticks of a process, from /proc (Linux, 100 ticks a second); `children`: of its children waited for. */
function cpuTicks (pid: number | 'self', children = false): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return children ? Number(fields[13]) + Number(fields[14]) : Number(fields[11]) + Number(fields[12])
}

const rssKb = (pid: number): number => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN)

async function wrk (port: number, request: RequestSpec, seconds: number, ids: { base: number, cycle?: number }): Promise<LoadResult> {
  const args = [`token=${TOKEN}`, `method=${request.method}`, `path=${request.path}`, `threads=${settings.threads}`, `base=${ids.base}`]
  if (request.body !== undefined) args.push(`body=${request.body}`)
  if (ids.cycle !== undefined) args.push(`cycle=${ids.cycle}`)
  const [command, ...argv] = onCore(1, ['wrk', '-t', String(settings.threads), '-c', String(settings.connections), '-d', `${seconds}s`,
    '--timeout', '10s', '-s', join(ROOT, 'bench', 'request.lua'), `http://127.0.0.1:${port}`, '--', ...args])
  const child = track(spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] }))
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk })
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk })
  await new Promise((resolve) => child.once('close', resolve))
  const line = output.split('\n').find((l) => l.startsWith('BENCH_RESULT '))
  if (line === undefined) fail(`wrk printed no result:\n${output.slice(-2000)}`)
  return JSON.parse(line.slice('BENCH_RESULT '.length))
}

// Every run takes its fresh ids (and `{n}`s) from a block of its own, so a run never repeats a
// warm-up's: a create retried, or an update to the same name, would write nothing. The first
// block is random, so a PostgreSQL database that outlives the bench gets fresh ids too. Blocks
// stay below 2^53, where wrk's Lua doubles stop being exact.
let nextBlock = randomInt(1, 8_000_000)
const idBlock = (): number => 1e9 * nextBlock++

/** Plants 1..count, each created once, over settings.connections connections. */
async function prefill (port: number, count: number): Promise<void> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: settings.connections })
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
  let next = 1
  try {
    await Promise.all(Array.from({ length: settings.connections }, async () => {
      while (next <= count) {
        const id = String(next++)
        const { statusCode, body } = await pool.request({ method: 'POST', path: '/plants', headers, body: createPlant.body!.replace('{id}', id) })
        await body.dump()
        if (statusCode !== 200) fail(`the prefill's POST /plants of id ${id} answered ${statusCode}`)
      }
    }))
  } finally {
    await pool.close()
  }
}

/** A local webhook receiver that answers 200 at once, counting the deliveries. */
async function startReceiver (): Promise<{ url: string, received: () => number, close: () => void }> {
  let received = 0
  const server = createServer((req, res) => { req.resume().once('end', () => { received++; res.end() }) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  return { url, received: () => received, close: () => { server.closeAllConnections(); server.close() } }
}

async function call (port: number, method: string, path: string, body?: unknown): Promise<{ status: number, text: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  return { status: response.status, text: await response.text() }
}

/** plant_store_webhook_deliveries_pending as /metrics says it now; undefined if it is not there. */
async function pendingDeliveries (port: number): Promise<number | undefined> {
  const { text } = await call(port, 'GET', '/metrics')
  const line = text.split('\n').find((l) => l.startsWith('plant_store_webhook_deliveries_pending '))
  return line === undefined ? undefined : Number(line.split(' ')[1])
}

export async function runScenario (scenario: Scenario, build: Build, root: string, runs = settings.runs): Promise<Row> {
  const row: Row = { name: scenario.name, compareTo: scenario.compareTo, request: scenario.request, prefill: scenario.prefill, runs: [] }
  const dir = join(root, `${scenario.name.replace(/[^\w.-]+/g, '_')}-${randomBytes(3).toString('hex')}`)
  mkdirSync(dir, { recursive: true })
  process.stderr.write(`bench: ${scenario.name}${scenario.server === 'framework' ? '' : ` (${build.name})`}\n`)
  const server = await startServer(scenario, build, dir)
  let window = { fromMs: 0, toMs: 0, requests: 0 }
  const receiver = scenario.webhook === true ? await startReceiver() : undefined
  try {
    if (scenario.prefill !== undefined) await prefill(server.port, scenario.prefill)
    if (receiver !== undefined) {
      const { status, text } = await call(server.port, 'POST', '/webhooks', { url: receiver.url })
      if (status !== 201) fail(`cannot subscribe the bench's receiver: ${status} ${text}`)
    }
    const ids = (): { base: number, cycle?: number } => ({ base: idBlock(), cycle: scenario.request.existing === true ? scenario.prefill : undefined })
    if (settings.warmupSeconds > 0) await wrk(server.port, scenario.request, settings.warmupSeconds, ids())
    for (let i = 0; i < runs; i++) {
      // wrk is the only child that exits during a run: the bench's children's CPU is wrk's.
      const [log, ticks, loadTicks, received, started] = [statSync(server.log).size, cpuTicks(server.pid), cpuTicks('self', true), receiver?.received() ?? 0, performance.now()]
      const result = await wrk(server.port, scenario.request, settings.seconds, ids())
      if (server.child.exitCode !== null || server.child.signalCode !== null) fail(`the server exited during the run:\n${tail(server.log)}`)
      const seconds = (performance.now() - started) / 1000
      window = { fromMs: started - server.spawnedAt, toMs: performance.now() - server.spawnedAt, requests: result.requests }
      row.runs.push({
        result,
        cpu: { server: (cpuTicks(server.pid) - ticks) / 100 / seconds, load: (cpuTicks('self', true) - loadTicks) / 100 / seconds },
        rssKb: rssKb(server.pid),
        logBytesPerRequest: result.requests > 0 ? (statSync(server.log).size - log) / result.requests : undefined,
        webhooks: receiver === undefined ? undefined : { received: receiver.received() - received, pending: await pendingDeliveries(server.port) }
      })
    }
  } finally {
    await stop(server.child)
    receiver?.close()
  }
  if (settings.profile && window.requests > 0) row.profile = attribute(join(dir, 'profile'), window.requests, window.fromMs, window.toMs)
  const median = [...row.runs].sort((a, b) => rps(a.result) - rps(b.result))[Math.floor((row.runs.length - 1) / 2)]
  return { ...row, requestsPerSecond: Math.round(rps(median.result)), p50Us: median.result.p50Us, p99Us: median.result.p99Us }
}

export const int = (n: number): string => Math.round(n).toLocaleString('en-US')
export const ms = (us: number): string => (us / 1000).toFixed(2)

/** A plain table with aligned columns: the first left-aligned, the rest right-aligned. */
export function table (rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  return rows.map((r) => r.map((c, i) => i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])).join('  ').trimEnd()).join('\n')
}
