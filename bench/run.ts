/**
 * The Plant Store benchmark: `npm run bench` (builds first), or after a build
 * `npx tsx bench/run.ts`. Prints markdown to stdout, progress to stderr.
 *
 * Every scenario starts its own server process in a fresh temp dir, loads it with wrk
 * (autocannon when wrk is missing), and is stopped before the next one starts: one
 * scenario at a time, so they never share the two cores. The services run as shipped,
 * LOG_LEVEL=info into a file, so the table includes the cost of logging.
 *
 * Environment:
 *   BENCH_SECONDS=10         measured run per scenario
 *   BENCH_WARMUP_SECONDS=3   warm-up before it, results discarded
 *   BENCH_RUNS=1             measured runs per scenario; the table shows the median
 *   BENCH_CONNECTIONS=50  BENCH_THREADS=2   wrk -c and -t
 *   BENCH_ONLY=a,b           only the scenarios with these names
 *   BENCH_MILLION=1000000    plants stored for the memory and disk footprint section
 *   BENCH_SKIP_MILLION=1     skip that section
 *   BENCH_LOAD=wrk|autocannon   force a load generator
 *   BENCH_KEEP=1             keep the temp dir (server logs, databases)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import { accessSync, closeSync, constants, createReadStream, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { postgresUnavailable, startPostgres } from '../test/helpers/postgres.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const BENCH = join(ROOT, 'bench')
const SERVICE_ENTRY = join(ROOT, 'dist', 'src', 'server.js')

// ---------------------------------------------------------------------------
// The scenarios. Add a row here; nothing below needs to change.

interface RequestSpec {
  method: string
  /** `{id}` is replaced by the request's id, in path and body alike. */
  path: string
  body?: string
  /**
   * unique (default): an id never sent before, so every create really inserts.
   * prefilled: ids 1..prefill, cycling, for reads of what the prefill stored.
   */
  ids?: 'unique' | 'prefilled'
}

interface ServerSpec {
  /** Arguments after `node`. */
  argv: string[]
  /** The server's environment besides HOST, PORT, API_TOKENS and LOG_LEVEL; `dir` is the scenario's own fresh temp dir. */
  env: (dir: string) => Record<string, string>
}

interface Scenario {
  name: string
  server: ServerSpec
  request: RequestSpec
  /** Plants 1..prefill created through POST /plants after start, before the warm-up. */
  prefill?: number
  /** The row whose requests/s counts as 1.00× for this one. */
  compareTo?: string
  /** Why this row cannot run here (say, no PostgreSQL to talk to); undefined when it can. */
  skip?: () => string | undefined
}

const baselineServer: ServerSpec = { argv: ['--import', 'tsx', join(BENCH, 'baseline.ts')], env: () => ({}) }

function service (databaseUrl: (dir: string) => string, env: Record<string, string> = {}): ServerSpec {
  return { argv: [SERVICE_ENTRY], env: (dir) => ({ DATABASE_URL: databaseUrl(dir), ...env }) }
}

const memory = service(() => 'memory:')
const sqlite = service((dir) => `sqlite:${join(dir, 'plants.db')}`)
// One commit per write: what group commit buys is the difference to the row above it.
const noGroupCommit = { GROUP_COMMIT_MAX_BATCH: '1' }
// Set by main() to a cluster it starts, unless BENCH_POSTGRES_URL names one.
let postgresUrl = process.env.BENCH_POSTGRES_URL
const postgres = (env: Record<string, string> = {}) => service(() => postgresUrl ?? '', env)
const needsPostgres = (): string | undefined => postgresUrl === undefined ? postgresUnavailable() ?? 'no PostgreSQL cluster' : undefined

const createPlant: RequestSpec = {
  method: 'POST',
  path: '/plants',
  body: '{"id":{id},"name":"Monstera deliciosa","tag":"tropical"}'
}

const scenarios: Scenario[] = [
  { name: 'baseline', server: baselineServer, request: createPlant },
  { name: 'memory', server: memory, request: createPlant },
  { name: 'sqlite', server: sqlite, request: createPlant },
  { name: 'sqlite, no group commit', server: service((dir) => `sqlite:${join(dir, 'plants.db')}`, noGroupCommit), request: createPlant },
  { name: 'postgres', server: postgres(), request: createPlant, skip: needsPostgres },
  { name: 'postgres, no group commit', server: postgres(noGroupCommit), request: createPlant, skip: needsPostgres },
  // Reads, against the same baseline (which answers the POST): the ratio says what a read
  // costs next to the bare server's cheapest request.
  { name: 'sqlite GET /plants/{id}', server: sqlite, prefill: 100_000, request: { method: 'GET', path: '/plants/{id}', ids: 'prefilled' } },
  { name: 'sqlite GET /plants?limit=100', server: sqlite, prefill: 100_000, request: { method: 'GET', path: '/plants?limit=100' } }
]

// ---------------------------------------------------------------------------

const settings = {
  seconds: envNumber('BENCH_SECONDS', 10),
  warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 3),
  runs: Math.max(1, envNumber('BENCH_RUNS', 1)),
  connections: envNumber('BENCH_CONNECTIONS', 50),
  threads: envNumber('BENCH_THREADS', 2),
  million: envNumber('BENCH_MILLION', 1_000_000),
  skipMillion: process.env.BENCH_SKIP_MILLION === '1',
  only: process.env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter((s) => s !== ''),
  keep: process.env.BENCH_KEEP === '1'
}

const TOKEN = `bench-${randomBytes(12).toString('base64url')}`

function envNumber (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 0) {
    // Read while the module loads, before main's error handling exists.
    process.stderr.write(`bench: ${name} must be a whole number; got ${JSON.stringify(raw)}\n`)
    process.exit(2)
  }
  return value
}

/** A failure the bench explains itself: reported as a message, not a stack. */
class BenchError extends Error {}

function fail (message: string): never {
  throw new BenchError(message)
}

// ---------------------------------------------------------------------------
// Child processes: every one is recorded so that no exit path leaves one behind.

const children = new Set<ChildProcess>()

/** Why a child could not be started (say, ENOENT): without a listener the error would end the bench. */
const spawnErrors = new WeakMap<ChildProcess, Error>()

function track (child: ChildProcess): ChildProcess {
  children.add(child)
  child.once('exit', () => children.delete(child))
  child.once('error', (err) => {
    spawnErrors.set(child, err)
    children.delete(child)
  })
  return child
}

function killAll (): void {
  for (const child of children) child.kill('SIGKILL')
}

/** The run's temp dir, removed however the run ends (unless BENCH_KEEP=1). */
let tempRoot: string | undefined

function cleanUp (): void {
  killAll()
  if (tempRoot === undefined) return
  if (settings.keep) process.stderr.write(`bench: kept ${tempRoot}\n`)
  else rmSync(tempRoot, { recursive: true, force: true })
  tempRoot = undefined
}

process.on('exit', cleanUp)
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping\n`)
    process.exit(130) // the exit handler kills the children and removes the temp dir
  })
}

async function waitForExit (child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true
  return await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve(true)
    })
  })
}

async function stop (child: ChildProcess): Promise<void> {
  child.kill('SIGTERM')
  if (!await waitForExit(child, 10_000)) {
    child.kill('SIGKILL')
    await waitForExit(child, 5_000)
  }
}

// ---------------------------------------------------------------------------
// The machine.

function onPath (command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, command)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  return undefined
}

const cpuCount = readFileSync('/proc/cpuinfo', 'utf8').split('\n').filter((l) => l.startsWith('processor')).length
const cpuModel = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown'
// Pinning needs two cores: the server on core 0, the load generator on core 1, so
// neither steals cycles from the other and the server's number is its own.
const pin = onPath('taskset') !== undefined && cpuCount >= 2

function pinned (core: number, command: string, args: string[]): [string, string[]] {
  return pin ? ['taskset', ['-c', String(core), command, ...args]] : [command, args]
}

function filesystemOf (path: string): string {
  let best = { mount: '', type: 'unknown' }
  for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
    const [, mount, type] = line.split(' ')
    if (mount === undefined || type === undefined) continue
    const inside = path === mount || path.startsWith(mount.endsWith('/') ? mount : mount + '/')
    if (inside && mount.length >= best.mount.length) best = { mount, type }
  }
  return best.type
}

/** Jiffies; steal is time the VM wanted a CPU and its host gave it to another guest. */
interface CpuSample { busy: number, interrupts: number, iowait: number, steal: number, total: number }

/** Per-core jiffies from /proc/stat: core 0 is the server's, core 1 the load generator's. */
function coreTimes (): Map<string, CpuSample> {
  const cores = new Map<string, CpuSample>()
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const m = /^(cpu\d*)\s+(.*)$/.exec(line)
    if (m === null) continue
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const [user, nice, system, idle, iowait, irq, softirq, steal] = m[2].split(/\s+/).map(Number)
    const busy = user + nice + system + irq + softirq
    cores.set(m[1], { busy, interrupts: irq + softirq, iowait, steal: steal ?? 0, total: busy + idle + iowait + (steal ?? 0) })
  }
  return cores
}

/** user+system jiffies from /proc/<pid>/stat, all the process's threads included. */
function processTicks (pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

// PF_KTHREAD in the flags of /proc/<pid>/stat.
const PF_KTHREAD = 0x00200000

/** Jiffies of all kernel threads: disk writeback, the ext4 journal, ksoftirqd. */
function kernelThreadTicks (): number {
  let ticks = 0
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if ((Number(fields[6]) & PF_KTHREAD) !== 0) ticks += Number(fields[11]) + Number(fields[12])
    } catch {} // gone meanwhile
  }
  return ticks
}

interface CpuSnapshot { cores: Map<string, CpuSample>, server: number, self: number, children: number, kthreads: number }

function snapshot (serverPid: number): CpuSnapshot {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  const [utime, stime, cutime, cstime] = stat.slice(stat.lastIndexOf(')') + 2).split(' ').slice(11, 15).map(Number)
  return { cores: coreTimes(), server: processTicks(serverPid), self: utime + stime, children: cutime + cstime, kthreads: kernelThreadTicks() }
}

/** Where the CPU went during a run, each as a share of one core. */
interface CpuUse {
  server: number
  /** Known once it has exited and been reaped: the only child of this process to end during a run. */
  loadGenerator: number
  /** Interrupts, softirqs (loopback TCP) and kernel threads (disk writeback, journal): charged to no process. */
  kernel: number
  /** The rest of the busy time: every other process on the machine. */
  others: number
  /** Pinned: the server's core and the load generator's. */
  core0?: CpuSample
  core1?: CpuSample
}

function cpuUse (a: CpuSnapshot, b: CpuSnapshot): CpuUse {
  const all = delta(a.cores.get('cpu'), b.cores.get('cpu'))!
  // Jiffies of all cores over the run, per core, stand for its wall time in the processes' unit.
  const wall = all.total / cpuCount
  const server = b.server - a.server
  const children = b.children - a.children
  const kernel = all.interrupts + b.kthreads - a.kthreads
  // By difference, so that processes born and gone within the run are counted too.
  const others = all.busy - server - children - (b.self - a.self) - kernel
  return {
    server: server / wall,
    loadGenerator: children / wall,
    kernel: kernel / wall,
    others: Math.max(0, others) / wall,
    core0: delta(a.cores.get('cpu0'), b.cores.get('cpu0')),
    core1: delta(a.cores.get('cpu1'), b.cores.get('cpu1'))
  }
}

function delta (a: CpuSample | undefined, b: CpuSample | undefined): CpuSample | undefined {
  if (a === undefined || b === undefined) return undefined
  return { busy: b.busy - a.busy, interrupts: b.interrupts - a.interrupts, iowait: b.iowait - a.iowait, steal: b.steal - a.steal, total: b.total - a.total }
}

function memoryKb (pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m === null ? NaN : Number(m[1])
}

// ---------------------------------------------------------------------------
// Servers.

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')))
    })
  })
}

async function answers (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => { socket.destroy(); resolve(false) })
  })
}

interface Server {
  child: ChildProcess
  pid: number
  port: number
  logPath: string
  errPath: string
}

function tail (path: string, lines = 15): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return ''
  }
}

async function startServer (spec: ServerSpec, dir: string): Promise<Server> {
  const port = await freePort()
  const logPath = join(dir, 'server.log')
  const errPath = join(dir, 'server.err')
  // A file, not /dev/null: the kernel then really copies every log line, as in production.
  const out = openSync(logPath, 'w')
  const err = openSync(errPath, 'w')
  const [command, args] = pinned(0, process.execPath, spec.argv)
  let child: ChildProcess
  try {
    child = track(spawn(command, args, {
      cwd: ROOT,
      stdio: ['ignore', out, err],
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        API_TOKENS: TOKEN,
        LOG_LEVEL: 'info',
        ...spec.env(dir)
      }
    }))
  } finally {
    closeSync(out)
    closeSync(err)
  }
  const deadline = Date.now() + 30_000
  while (!await answers(port)) {
    const spawnError = spawnErrors.get(child)
    if (spawnError !== undefined) fail(`cannot start ${command}: ${spawnError.message}`)
    if (child.exitCode !== null || child.signalCode !== null) {
      const why = tail(errPath)
      fail(`the server exited (${child.exitCode ?? child.signalCode}) before answering: ${why.split('\n').at(-1) ?? ''}\n${why}\n${tail(logPath)}`)
    }
    if (Date.now() > deadline) {
      await stop(child)
      fail(`the server did not answer on port ${port} within 30 s:\n${tail(errPath)}`)
    }
    await sleep(50)
  }
  // With taskset the spawned process execs node, so this pid is the server's own.
  return { child, pid: child.pid!, port, logPath, errPath }
}

/** The service's own log lines, requests left out: why it stopped, say. */
function notableLogLines (logPath: string, count = 10): string {
  try {
    return readFileSync(logPath, 'utf8').split('\n').filter((l) => l !== '' && !l.includes('"msg":"request completed"')).slice(-count).join('\n')
  } catch {
    return ''
  }
}

/** The first request the service logged as failed, to say why a row has errors. */
async function firstLoggedError (logPath: string): Promise<string | undefined> {
  if (!existsSync(logPath)) return undefined
  const lines = createInterface({ input: createReadStream(logPath), crlfDelay: Infinity })
  try {
    for await (const line of lines) {
      let entry: { status?: number, method?: string, url?: string, level?: number, msg?: string, err?: { message?: string } }
      try { entry = JSON.parse(line) } catch { continue }
      if ((entry.status ?? 0) >= 400 || (entry.level ?? 0) >= 50) {
        const request = entry.method === undefined ? '' : `${entry.method} ${entry.url ?? ''} `
        return `${request}${entry.status ?? ''} ${entry.msg ?? ''}${entry.err?.message === undefined ? '' : `: ${entry.err.message}`}`.trim()
      }
    }
  } finally {
    lines.close()
  }
  return undefined
}

// ---------------------------------------------------------------------------
// Load generators: both report the same LoadResult.

interface LoadOptions {
  port: number
  request: RequestSpec
  /** First id; with `cycle`, ids wrap over base..base+cycle-1. */
  base: number
  cycle?: number
  /** A timed run... */
  seconds?: number
  /** ...or exactly these many ids, base..base+total-1, each sent once (a fill). */
  total?: number
  /** Ends the run early (the server died): it then reports what it has. */
  abort?: AbortSignal
}

interface LoadResult {
  requests: number
  durationUs: number
  p50Us: number
  p99Us: number
  maxUs: number
  /** Answers with status >= 400 (wrk's count; this API answers no 1xx or 3xx). */
  statusErrors: number
  connectErrors: number
  readErrors: number
  writeErrors: number
  timeouts: number
}

interface LoadGenerator {
  name: string
  run: (options: LoadOptions) => Promise<LoadResult>
}

const TIMEOUT_SECONDS = 10
// Each wrk thread reports every 50,000 ids: minutes without a word means a stuck fill.
const FILL_STALL_MS = 180_000
// Above this share of a core used by processes not ours, a row is flagged as noisy.
const NOISE = 0.1

function parseResult (output: string): LoadResult {
  const line = output.split('\n').find((l) => l.startsWith('BENCH_RESULT '))
  if (line === undefined) fail(`the load generator printed no BENCH_RESULT line:\n${output.slice(-2000)}`)
  const r = JSON.parse(line.slice('BENCH_RESULT '.length))
  return {
    requests: r.requests,
    durationUs: r.duration_us,
    p50Us: r.p50_us,
    p99Us: r.p99_us,
    maxUs: r.max_us,
    statusErrors: r.status_errors,
    connectErrors: r.connect_errors,
    readErrors: r.read_errors,
    writeErrors: r.write_errors,
    timeouts: r.timeouts
  }
}

/**
 * Runs a load generator that prints BENCH_RESULT at its end. In a fill it prints
 * FILL_THREAD_DONE per thread once that thread has sent its share; when all have,
 * it is interrupted (wrk otherwise sleeps out its whole -d) and reports as usual.
 */
async function runLoad (command: string, args: string[], fillThreads: number, fillTotal: number, abort?: AbortSignal): Promise<LoadResult> {
  const child = track(spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] }))
  const interrupt = (): void => { child.kill('SIGINT') }
  abort?.addEventListener('abort', interrupt)
  let output = ''
  let done = 0
  let filled = 0
  let lastProgress = Date.now()
  let lastLine = Date.now()
  // A fill has no clock of its own: one that stops progressing is ended, and fails on its errors.
  const watchdog = fillThreads === 0
    ? undefined
    : setInterval(() => { if (Date.now() - lastLine > FILL_STALL_MS) interrupt() }, 5_000)
  child.stdout!.setEncoding('utf8')
  child.stderr!.setEncoding('utf8')
  const lines = createInterface({ input: child.stdout! })
  lines.on('line', (line) => {
    output += line + '\n'
    lastLine = Date.now()
    if (line.startsWith('FILL_PROGRESS ')) {
      filled += Number(line.split(' ')[1])
      if (Date.now() - lastProgress > 10_000) {
        lastProgress = Date.now()
        process.stderr.write(`  … ${filled.toLocaleString('en-US')} of ${fillTotal.toLocaleString('en-US')}\n`)
      }
    }
    if (line.startsWith('FILL_THREAD_DONE') && ++done === fillThreads) child.kill('SIGINT')
  })
  child.stderr!.on('data', (chunk: string) => { output += chunk })
  const code = await new Promise<number | string | null>((resolve) => {
    child.once('close', (c, signal) => resolve(c ?? signal))
    child.once('error', (err) => resolve(err.message))
  })
  clearInterval(watchdog)
  abort?.removeEventListener('abort', interrupt)
  if (!output.includes('BENCH_RESULT ')) fail(`${command} ${args.join(' ')} exited (${code}) without a result:\n${output.slice(-2000)}`)
  return parseResult(output)
}

function wrkGenerator (wrk: string): LoadGenerator {
  return {
    name: 'wrk',
    async run (o) {
      const args = [
        `token=${TOKEN}`, `method=${o.request.method}`, `path=${o.request.path}`,
        `threads=${settings.threads}`, `base=${o.base}`
      ]
      if (o.request.body !== undefined) args.push(`body=${o.request.body}`)
      if (o.cycle !== undefined) args.push(`cycle=${o.cycle}`)
      if (o.total !== undefined) args.push(`total=${o.total}`)
      // A fill ends when its ids are sent, not on a clock: the day is only a bound.
      const seconds = o.total === undefined ? o.seconds ?? settings.seconds : 86_400
      const [command, argv] = pinned(1, wrk, [
        '-t', String(settings.threads), '-c', String(settings.connections), '-d', `${seconds}s`,
        '--timeout', `${TIMEOUT_SECONDS}s`, '-s', join(BENCH, 'request.lua'),
        `http://127.0.0.1:${o.port}`, '--', ...args
      ])
      return await runLoad(command, argv, o.total === undefined ? 0 : settings.threads, o.total ?? 0, o.abort)
    }
  }
}

function autocannonGenerator (): LoadGenerator {
  return {
    name: 'autocannon',
    async run (o) {
      const options = { ...o, connections: settings.connections, seconds: o.seconds ?? settings.seconds, token: TOKEN, timeoutSeconds: TIMEOUT_SECONDS }
      const [command, argv] = pinned(1, process.execPath, ['--import', 'tsx', join(BENCH, 'autocannon.ts'), JSON.stringify(options)])
      return await runLoad(command, argv, 0, o.total ?? 0, o.abort)
    }
  }
}

function pickLoadGenerator (): LoadGenerator {
  const wanted = process.env.BENCH_LOAD
  const wrk = onPath('wrk')
  if ((wanted === undefined || wanted === 'wrk') && wrk !== undefined) return wrkGenerator(wrk)
  if (wanted === 'wrk') fail('BENCH_LOAD=wrk but wrk is not on PATH (apt-get install wrk)')
  // autocannon, a devDependency, tops out near 13k requests/s on a 2-core machine and so
  // hides differences between fast servers: wrk is preferred.
  return autocannonGenerator()
}

// ---------------------------------------------------------------------------
// Running one scenario.

// Each run takes ids from its own block, so a measured run never repeats a warm-up's
// id (which would be a cheap retry, not a create). The first block is random so that
// a store that outlives the bench (a PostgreSQL database) gets fresh ids next time
// too. Blocks stay below 2^53, where the Lua doubles in wrk stop being exact; ids
// below the first block are for prefills.
const ID_BLOCK = 1e9
let nextBlock = randomInt(1, 8_000_000)

function idBlock (): number {
  return ID_BLOCK * nextBlock++
}

interface Measured {
  result: LoadResult
  cpu: CpuUse
  rssKb: number
  logBytesPerRequest?: number
}

interface Row {
  scenario: Scenario
  /** The measured runs, in order; the table shows the median by requests/s. */
  runs: Measured[]
  error?: string
  loggedError?: string
}

function median (runs: Measured[]): Measured | undefined {
  return [...runs].sort((x, y) => rps(x.result) - rps(y.result))[Math.floor((runs.length - 1) / 2)]
}

async function fill (load: LoadGenerator, server: Server, total: number, base: number): Promise<LoadResult & { seconds: number }> {
  const died = new AbortController()
  const onExit = (): void => died.abort()
  server.child.once('exit', onExit)
  const started = process.hrtime.bigint()
  let result: LoadResult
  try {
    result = await load.run({ port: server.port, request: createPlant, base, total, abort: died.signal })
  } finally {
    server.child.off('exit', onExit)
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  if (died.signal.aborted) fail(`the server exited (${server.child.exitCode ?? server.child.signalCode}) during the fill:\n${tail(server.errPath)}\n${notableLogLines(server.logPath)}`)
  if (result.statusErrors + result.connectErrors + result.readErrors + result.writeErrors + result.timeouts > 0) {
    fail(`the fill had errors: ${errorSummary(result)}`)
  }
  return { ...result, seconds }
}

async function runScenario (scenario: Scenario, load: LoadGenerator, root: string): Promise<Row> {
  const skipped = scenario.skip?.()
  if (skipped !== undefined) return { scenario, runs: [], error: `skipped: ${skipped}` }
  const dir = join(root, scenario.name.replace(/[^\w.-]+/g, '_'))
  mkdirSync(dir, { recursive: true })
  process.stderr.write(`bench: ${scenario.name}\n`)
  const server = await startServer(scenario.server, dir)
  try {
    const prefilled = scenario.request.ids === 'prefilled'
    if (prefilled && scenario.prefill === undefined) fail(`${scenario.name}: ids 'prefilled' needs a prefill count`)
    if (scenario.prefill !== undefined) {
      process.stderr.write(`  prefill: ${scenario.prefill.toLocaleString('en-US')} plants\n`)
      await fill(load, server, scenario.prefill, 1)
    }
    const ids = (): Pick<LoadOptions, 'base' | 'cycle'> => prefilled ? { base: 1, cycle: scenario.prefill } : { base: idBlock() }
    if (settings.warmupSeconds > 0) {
      process.stderr.write(`  warm-up: ${settings.warmupSeconds} s\n`)
      await load.run({ port: server.port, request: scenario.request, seconds: settings.warmupSeconds, ...ids() })
    }
    const row: Row = { scenario, runs: [] }
    for (let i = 1; i <= settings.runs; i++) {
      process.stderr.write(`  measured: ${settings.seconds} s${settings.runs > 1 ? ` (${i} of ${settings.runs})` : ''}\n`)
      const logBefore = statSync(server.logPath).size
      const before = snapshot(server.pid)
      const result = await load.run({ port: server.port, request: scenario.request, seconds: settings.seconds, ...ids() })
      const cpu = cpuUse(before, snapshot(server.pid))
      row.runs.push({
        result,
        cpu,
        rssKb: memoryKb(server.pid, 'VmRSS'),
        logBytesPerRequest: result.requests > 0 ? (statSync(server.logPath).size - logBefore) / result.requests : undefined
      })
    }
    if (row.runs.some((run) => run.result.statusErrors > 0)) row.loggedError = await firstLoggedError(server.logPath)
    return row
  } finally {
    await stop(server.child)
  }
}

// ---------------------------------------------------------------------------
// The million: what the stores hold on to once they have many plants.

interface Footprint {
  store: string
  fill?: LoadResult & { seconds: number }
  rssEmptyKb?: number
  rssKb?: number
  hwmKb?: number
  disk?: { db: number, wal: number, shm: number }
  rows?: number
  error?: string
}

async function footprint (store: string, spec: ServerSpec, load: LoadGenerator, root: string, count: number): Promise<Footprint> {
  const dir = join(root, `million-${store}`)
  mkdirSync(dir, { recursive: true })
  process.stderr.write(`bench: ${count.toLocaleString('en-US')} plants into ${store}\n`)
  const server = await startServer(spec, dir)
  const out: Footprint = { store }
  try {
    out.rssEmptyKb = memoryKb(server.pid, 'VmRSS')
    out.fill = await fill(load, server, count, 1)
    out.rssKb = memoryKb(server.pid, 'VmRSS')
    out.hwmKb = memoryKb(server.pid, 'VmHWM')
    const db = join(dir, 'plants.db')
    if (existsSync(db)) {
      const size = (path: string): number => existsSync(path) ? statSync(path).size : 0
      // Measured while the service runs: what it occupies in service, WAL included.
      out.disk = { db: size(db), wal: size(`${db}-wal`), shm: size(`${db}-shm`) }
    }
  } finally {
    await stop(server.child)
  }
  const db = join(dir, 'plants.db')
  if (existsSync(db)) {
    // Counted, not assumed: a fill that lost creates must not pass for a full one.
    const reader = new Database(db, { readonly: true })
    try {
      out.rows = Number(reader.prepare('SELECT count(*) AS n FROM plants').pluck().get())
    } finally {
      reader.close()
    }
  }
  return out
}

// ---------------------------------------------------------------------------
// Output.

const int = (n: number): string => Math.round(n).toLocaleString('en-US')
const ms = (us: number): string => (us / 1000).toFixed(2)
const pct = (x: number): string => `${Math.round(x * 100)}%`
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`

function rps (r: LoadResult): number {
  return r.durationUs > 0 ? r.requests / (r.durationUs / 1e6) : 0
}

function socketErrors (r: LoadResult): number {
  return r.connectErrors + r.readErrors + r.writeErrors + r.timeouts
}

function errorSummary (r: LoadResult): string {
  return `${r.statusErrors} non-2xx, ${r.connectErrors} connect, ${r.readErrors} read, ${r.writeErrors} write errors, ${r.timeouts} timeouts`
}

function table (header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n')
}

function printRows (rows: Row[]): boolean {
  let valid = true
  const shown = new Map(rows.map((row) => [row.scenario.name, median(row.runs)]))
  const body = rows.map((row) => {
    const m = shown.get(row.scenario.name)
    if (m === undefined) {
      if (!(row.error ?? '').startsWith('skipped')) valid = false
      const error = row.error ?? 'failed'
      return [row.scenario.name, error.length > 60 ? `${error.slice(0, 59)}… (below)` : error, '', '', '', '', '', '', '', '', '']
    }
    const r = m.result
    const reference = shown.get(row.scenario.compareTo ?? 'baseline')?.result
    // Any run with errors spoils the row, not only the one shown.
    const statusErrors = row.runs.reduce((sum, run) => sum + run.result.statusErrors, 0)
    const sockErrors = row.runs.reduce((sum, run) => sum + socketErrors(run.result), 0)
    const bad = statusErrors > 0 || sockErrors > 0
    if (bad) valid = false
    return [
      bad ? `**${row.scenario.name} ⚠ INVALID**` : row.scenario.name,
      int(rps(r)),
      ms(r.p50Us),
      ms(r.p99Us),
      reference === undefined || rps(reference) === 0 ? '–' : `${(rps(r) / rps(reference)).toFixed(2)}×`,
      statusErrors > 0 ? `**${int(statusErrors)}**` : '0',
      sockErrors > 0 ? `**${int(sockErrors)}**` : '0',
      pct(m.cpu.server),
      pct(m.cpu.loadGenerator),
      pct(m.cpu.kernel),
      pct(m.cpu.others),
      process.version // every server runs on the runner's own Node (process.execPath)
    ]
  })
  console.log(table(['scenario', 'requests/s', 'p50 ms', 'p99 ms', 'vs baseline', 'non-2xx', 'socket errors', 'server CPU', 'load gen CPU', 'kernel CPU', 'other processes', 'node'], body))
  console.log()
  console.log('CPU columns: share of one core over the measured run (the machine has ' + String(cpuCount) + '). kernel: interrupts, softirqs and kernel threads (loopback TCP, disk writeback, journal), charged to no process. other processes: anything else running on the machine; above ' + pct(NOISE) + ' the row is flagged as noisy.')
  console.log()
  for (const row of rows) {
    const m = shown.get(row.scenario.name)
    if (m === undefined) {
      if (row.error !== undefined) console.log(`- ${row.scenario.name}: ${row.error}`)
      continue
    }
    const r = m.result
    const core = (name: string, c: CpuSample | undefined): string => c === undefined
      ? ''
      : `${name} busy ${pct(c.busy / c.total)}, iowait ${pct(c.iowait / c.total)}${c.steal / c.total >= 0.01 ? `, stolen by the hypervisor ${pct(c.steal / c.total)}` : ''}`
    const parts = [
      `${int(r.requests)} requests in ${(r.durationUs / 1e6).toFixed(1)} s`,
      `max ${ms(r.maxUs)} ms`,
      `RSS ${mb(m.rssKb * 1024)}`,
      m.logBytesPerRequest === undefined || m.logBytesPerRequest === 0 ? 'no log' : `log ${Math.round(m.logBytesPerRequest)} B/request`,
      pin ? core('core 0 (server)', m.cpu.core0) : '',
      pin ? core('core 1 (load gen)', m.cpu.core1) : '',
      row.runs.length > 1 ? `runs ${row.runs.map((run) => int(rps(run.result))).join(', ')} requests/s` : ''
    ].filter((p) => p !== '')
    console.log(`- ${row.scenario.name}: ${parts.join('; ')}`)
  }
  for (const row of rows) {
    const m = shown.get(row.scenario.name)
    if (m === undefined) continue
    for (const [i, run] of row.runs.entries()) {
      const r = run.result
      if (r.statusErrors === 0 && socketErrors(r) === 0) continue
      console.log()
      console.log(`**!!! ${row.scenario.name}${row.runs.length > 1 ? ` run ${i + 1}` : ''} IS NOT A VALID MEASUREMENT: ${errorSummary(r)}.**`)
    }
    if (row.loggedError !== undefined) console.log(`    first failure the service logged: ${row.loggedError}`)
    if (m.cpu.others > NOISE) {
      console.log()
      console.log(`**⚠ ${row.scenario.name}: other processes used ${pct(m.cpu.others)} of a core during the run: the row is noisy, run again on a quiet machine.**`)
    }
    const stolen = m.cpu.core0 === undefined ? 0 : m.cpu.core0.steal / m.cpu.core0.total
    if (stolen > NOISE / 2) {
      console.log()
      console.log(`**⚠ ${row.scenario.name}: the hypervisor took ${pct(stolen)} of the server's core: the row is noisy.**`)
    }
  }
  return valid
}

function printFootprints (count: number, results: Footprint[]): boolean {
  let valid = true
  const body = results.map((f) => {
    if (f.error !== undefined || f.fill === undefined) {
      valid = false
      return [f.store, `FAILED: ${f.error ?? 'no fill'}`, '', '', '', '', '', '']
    }
    if (f.rows !== undefined && f.rows !== count) valid = false
    const disk = f.disk === undefined ? undefined : f.disk.db + f.disk.wal + f.disk.shm
    return [
      f.store,
      `${f.fill.seconds.toFixed(1)} s (${int(count / f.fill.seconds)}/s)`,
      f.rows === undefined ? 'not countable' : f.rows === count ? int(f.rows) : `**${int(f.rows)} ⚠ expected ${int(count)}**`,
      f.rssEmptyKb === undefined ? '–' : mb(f.rssEmptyKb * 1024),
      f.rssKb === undefined ? '–' : mb(f.rssKb * 1024),
      f.rssKb === undefined || f.rssEmptyKb === undefined ? '–' : `${int((f.rssKb - f.rssEmptyKb) * 1024 / count)} B`,
      disk === undefined ? '–' : `${mb(disk)} (db ${mb(f.disk!.db)}, wal ${mb(f.disk!.wal)}, shm ${mb(f.disk!.shm)})`,
      disk === undefined ? '–' : `${int(disk / count)} B`
    ]
  })
  console.log(table(['store', 'fill through POST /plants', 'rows stored', 'RSS empty', 'RSS filled', 'RSS growth per plant', 'on disk', 'disk per plant'], body))
  console.log()
  for (const f of results) {
    if (f.hwmKb !== undefined) console.log(`- ${f.store}: peak RSS during the fill ${mb(f.hwmKb * 1024)}; fill p50 ${ms(f.fill!.p50Us)} ms, p99 ${ms(f.fill!.p99Us)} ms`)
  }
  return valid
}

// ---------------------------------------------------------------------------

async function main (): Promise<number> {
  const started = Date.now()
  if (!existsSync(SERVICE_ENTRY)) fail(`${SERVICE_ENTRY} is missing: run npm run build first (npm run bench does)`)
  const load = pickLoadGenerator()
  const root = mkdtempSync(join(tmpdir(), 'plant-bench-'))
  tempRoot = root
  let ok = true
  // The throwaway PostgreSQL cluster's own clean-up, run after the rows.
  const teardowns: Array<() => unknown> = []
  try {
    const wrkVersion = load.name === 'wrk' ? /^wrk (\S+)/.exec(spawnSync('wrk', ['-v'], { encoding: 'utf8' }).stdout)?.[1] ?? '' : ''
    console.log('# Plant Store benchmark')
    console.log()
    console.log(`- date: ${new Date().toISOString()}`)
    console.log(`- machine: ${cpuModel}, ${cpuCount} cores; node ${process.version}; Linux ${readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim()}`)
    console.log(`- load generator: ${load.name}${wrkVersion === '' ? '' : ` ${wrkVersion}`}, ${settings.connections} connections${load.name === 'wrk' ? `, ${settings.threads} threads` : ''}, warm-up ${settings.warmupSeconds} s, measured ${settings.seconds} s${settings.runs > 1 ? ` × ${settings.runs} (median shown)` : ''}`)
    console.log(pin
      ? '- taskset: server pinned to core 0, load generator to core 1'
      : `- taskset: ${onPath('taskset') === undefined ? 'not found' : `only ${cpuCount} core`}, processes NOT pinned (server and load generator share the cores)`)
    const loadAverage = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0])
    console.log(`- load average before the bench: ${loadAverage.toFixed(2)}${loadAverage > 0.5 ? ' **⚠ the machine is not idle: other processes compete for the cores and the numbers will be noisy**' : ''}`)
    console.log(`- services as shipped: LOG_LEVEL=info to a file, bearer auth; temp dir ${root} (${filesystemOf(root)})`)
    console.log(`- POST /plants, a never-used id per request, body ${createPlant.body}`)
    console.log()

    const selected = settings.only === undefined ? scenarios : scenarios.filter((s) => settings.only!.includes(s.name))
    if (selected.length === 0) fail(`BENCH_ONLY matches no scenario (there are: ${scenarios.map((s) => s.name).join(', ')})`)
    if (postgresUrl === undefined && postgresUnavailable() === undefined && selected.some((s) => s.name.startsWith('postgres'))) {
      process.stderr.write('bench: starting a throwaway PostgreSQL cluster\n')
      postgresUrl = (await startPostgres({ teardown: (fn) => { teardowns.push(fn) } })).url
    }
    const rows: Row[] = []
    for (const scenario of selected) {
      try {
        rows.push(await runScenario(scenario, load, root))
      } catch (err) {
        // One broken row should not cost the others: report it and go on.
        if (!(err instanceof BenchError)) throw err
        process.stderr.write(`bench: ${scenario.name} failed: ${err.message}\n`)
        rows.push({ scenario, runs: [], error: `FAILED: ${err.message.split('\n')[0]}` })
      }
    }
    ok = printRows(rows) && ok

    if (settings.skipMillion || settings.million === 0) {
      console.log()
      console.log('(footprint section skipped: BENCH_SKIP_MILLION=1)')
    } else {
      const count = settings.million
      const results: Footprint[] = []
      for (const [store, spec] of [['sqlite', sqlite], ['memory', memory]] as const) {
        try {
          results.push(await footprint(store, spec, load, root, count))
        } catch (err) {
          if (!(err instanceof BenchError)) throw err
          process.stderr.write(`bench: footprint ${store} failed: ${err.message}\n`)
          results.push({ store, error: err.message.split('\n')[0] })
        }
      }
      console.log()
      console.log(`## ${int(count)} plants`)
      console.log()
      ok = printFootprints(count, results) && ok
    }
  } finally {
    for (const teardown of teardowns.reverse()) await teardown()
    cleanUp()
  }
  console.log()
  console.log(`total bench time: ${((Date.now() - started) / 1000).toFixed(0)} s`)
  if (!ok) console.log('\n**SOME ROWS ARE INVALID OR FAILED: see above.**')
  return ok ? 0 : 1
}

try {
  process.exitCode = await main()
} catch (err) {
  cleanUp()
  process.stderr.write(`bench: ${err instanceof BenchError ? err.message : (err as Error).stack ?? String(err)}\n`)
  process.exitCode = 2
}
