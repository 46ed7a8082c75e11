/**
 * `npm run bench` (builds first): each scenario (bench/scenarios.ts) on a server of its own, one at
 * a time, loaded by wrk; prints its requests/s, p50, p99, ratio to its framework row (bare Fastify
 * doing the same work, in the same run), CPU and resident memory.
 * `npm run bench:ab -- <git ref>`: this checkout against the ref (built in a temp worktree with this
 * checkout's node_modules), the scenarios (BENCH_ONLY, default: memory, sqlite and sqlite reads by
 * id) in BENCH_ROUNDS alternating rounds, the order swapped every round so both builds see the same
 * drift of a noisy machine; prints the medians and in how many rounds this checkout was faster.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pinned, runScenario, wrkVersion, type Row } from './measure.ts'
import { BenchError, buildAt, fail, frameworkOf, ROOT, select, settings, withPostgres, type Build, type Scenario } from './scenarios.ts'

const int = (n: number): string => Math.round(n).toLocaleString('en-US')
const ms = (us: number): string => (us / 1000).toFixed(2)
const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return (sorted[Math.floor((sorted.length - 1) / 2)] + sorted[Math.ceil((sorted.length - 1) / 2)]) / 2
}

/** A plain table with aligned columns: the first left-aligned, the rest right-aligned. */
function table (rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  return rows.map((r) => r.map((c, i) => i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])).join('  ').trimEnd()).join('\n')
}

// Where a request's CPU goes (BENCH_PROFILE=1): a sample is charged to the first frame, from the leaf up, that a part
// (a pattern over `function@url`, most specific first) names, so work Fastify or Node does after a hook calls done() is theirs.
const PARTS: Array<[string, RegExp]> = [
  ['log line', /requestCompleted@|\/pino\/|sonic-boom|\/src\/log\//],
  ['metrics', /prom-client|\/plugins\/metrics\.js|instrumented-store/],
  ['store', /\/src\/store\/|better-sqlite3|\/pg\/|pg-protocol|^fsync@/],
  ['webhook delivery', /\/src\/webhooks\/|undici/],
  ['auth (token, rate, scope)', /bearer-auth|\/plugins\/auth|\/src\/tokens\/|rate-limit|rate-store/],
  ['service hooks', /\/src\/plugins\/|\/src\/http\/(answer-headers|request-target|unrouted|client-error|request-id)/],
  ['body parse', /json-body|lossless-json|content-type-parser/],
  ['validation', /ajv|\/src\/http\/validation|fastify\/lib\/validation/],
  ['serializer', /fast-json-stringify|^serialize@.*fastify/],
  ['handler', /\/src\/plants\/|bench\/framework/],
  ['Fastify', /\/fastify\/|find-my-way|avvio/],
  // Native writes are charged to their callers: a socket's to Node, the log file's to the log line.
  ['Node: HTTP and sockets', /node:_http|node:net|node:internal\/stream|node:events/]
]

interface CpuProfile { nodes: Array<{ id: number, callFrame: { functionName: string, url: string }, children?: number[] }>, samples: number[], timeDeltas: number[] }

/** Microseconds of CPU per request for each part, over the samples the profile in `dir` took between fromMs and toMs. */
function attribute ({ dir, requests, fromMs, toMs }: NonNullable<Row['profile']>): Record<string, number> {
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'))
  if (file === undefined) return {}
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile
  const parent = new Map<number, number>()
  const frames = new Map<number, string>()
  for (const { id, callFrame, children = [] } of profile.nodes) {
    frames.set(id, `${callFrame.functionName}@${callFrame.url}`)
    for (const child of children) parent.set(child, id)
  }
  const partOf = new Map<number, string>()
  const part = (leaf: number): string => {
    let found = partOf.get(leaf)
    for (let id: number | undefined = leaf; id !== undefined && found === undefined; id = parent.get(id)) found = PARTS.find(([, pattern]) => pattern.test(frames.get(id!)!))?.[0]
    const name = frames.get(leaf)!
    found ??= name.startsWith('(garbage collector)') ? 'GC' : name.startsWith('(idle)') ? 'idle' : 'other (V8, microtasks)'
    partOf.set(leaf, found)
    return found
  }
  const us: Record<string, number> = {}
  let atMs = 0
  profile.samples.forEach((sample, i) => {
    atMs += profile.timeDeltas[i] / 1000
    const name = atMs < fromMs || atMs > toMs ? 'idle' : part(sample)
    if (name !== 'idle') us[name] = (us[name] ?? 0) + profile.timeDeltas[i] / requests
  })
  return us
}

/** BENCH_PROFILE's parts as table rows, a column per profiled row, largest first (by their largest column). */
function partsTable (rows: Array<{ name: string, parts: Record<string, number> }>): string[][] {
  const largest = (name: string): number => Math.max(...rows.map((row) => row.parts[name] ?? 0))
  const names = [...new Set(rows.flatMap((row) => Object.keys(row.parts)))].sort((a, b) => largest(b) - largest(a))
  const total = (parts: Record<string, number>): string => Object.values(parts).reduce((sum, v) => sum + v, 0).toFixed(1)
  return [['µs of CPU per request', ...rows.map((row) => row.name)], ...names.map((name) => [name, ...rows.map((row) => (row.parts[name] ?? 0).toFixed(1))]), ['total', ...rows.map((row) => total(row.parts))]]
}

const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()

/** Runs `measure` in a temp dir, with the PostgreSQL the scenarios need (or why it cannot run); both gone after it, and at any exit. */
async function inTempDir<T> (selected: Scenario[], measure: (root: string, noPostgres: string | undefined) => Promise<T>): Promise<T> {
  const root = mkdtempSync(join(tmpdir(), 'plant-bench-'))
  const teardowns: Array<() => Promise<void>> = []
  const cleanUp = (): void => {
    spawnSync('git', ['worktree', 'remove', '--force', join(root, 'ref')], { cwd: ROOT, stdio: 'ignore' }) // bench:ab's, if it added one
    rmSync(root, { recursive: true, force: true })
  }
  process.once('exit', cleanUp)
  try {
    return await measure(root, await withPostgres(selected, { teardown: (fn) => { teardowns.push(fn) } }))
  } finally {
    for (const teardown of teardowns.reverse()) await teardown()
    cleanUp()
  }
}

async function bench (): Promise<number> {
  const started = Date.now()
  const build = buildAt(ROOT, 'this checkout')
  const selected = select(settings.only, true)
  const load = loadavg()[0]
  console.log(`${new Date().toISOString()}: Node ${process.version}, ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}, load average ${load.toFixed(2)}${load > 0.5 ? ' (the machine is busy: numbers will be noisy)' : ''}`)
  console.log(`wrk ${wrkVersion()}, ${settings.connections} connections, ${settings.threads} threads, ${settings.warmupSeconds} s warm-up, ${settings.seconds} s measured; ${pinned ? 'server on core 0, wrk on core 1' : 'not pinned (taskset or a second core missing)'}\n`)
  const rows: Array<Row & { parts?: Record<string, number> }> = []
  let failed = 0
  await inTempDir(selected, async (root, noPostgres) => {
    if (noPostgres !== undefined) process.stderr.write(`bench: the postgres rows are skipped: ${noPostgres}\n`)
    for (const scenario of selected.filter((s) => s.postgres !== true || noPostgres === undefined)) {
      try {
        const row = await runScenario(scenario, build, root)
        rows.push(row.profile === undefined ? row : { ...row, parts: attribute(row.profile) })
      } catch (err) {
        // One broken row should not cost the others.
        if (!(err instanceof BenchError)) throw err
        process.stderr.write(`bench: ${scenario.name} FAILED: ${err.message}\n`)
        failed++
      }
    }
  })

  const rate = (name: string | undefined): number | undefined => rows.find((row) => row.name === name)?.requestsPerSecond
  const lines = [['scenario', 'requests/s', 'p50 ms', 'p99 ms', 'ratio', 'to', 'errors', 'server CPU', 'wrk CPU', 'RSS MB']]
  for (const row of rows) {
    const compareTo = frameworkOf(selected.find((s) => s.name === row.name)!).name
    const reference = rate(compareTo)
    lines.push([row.name, int(row.requestsPerSecond), ms(row.p50Us), ms(row.p99Us), !(reference! > 0) ? '–' : (row.requestsPerSecond / reference!).toFixed(2),
      compareTo === row.name ? 'itself' : compareTo, row.errors > 0 ? `${int(row.errors)} INVALID` : '0',
      `${Math.round(row.cpu.server * 100)}%`, `${Math.round(row.cpu.load * 100)}%`, (row.rssKb / 1024).toFixed(0)])
  }
  console.log(table(lines))
  for (const { name, beside } of selected) {
    const [mine, theirs] = [rate(name), rate(beside)]
    if (mine !== undefined && theirs! > 0) console.log(`${name}: ${(mine / theirs!).toFixed(2)}× the requests/s of ${beside} on the same store (${int(mine)}/s against ${int(theirs!)}/s)`)
  }
  const profiled = rows.flatMap(({ name, parts }) => parts === undefined ? [] : [{ name, parts }])
  if (profiled.length > 0) console.log(`\nWhere the CPU goes (profiled: the profiler's own cost is in every column)\n${table(partsTable(profiled))}`)
  for (const { name, webhooks } of rows) {
    if (webhooks !== undefined) console.log(`${name}: ${int(webhooks.received)} deliveries received during the run, ${webhooks.pending} pending after it`)
  }
  const ok = failed === 0 && rows.every((row) => row.errors === 0)
  console.log(`\n${ok ? '' : 'SOME ROWS FAILED OR HAD ERRORS: they are not valid measurements.\n'}${Math.round((Date.now() - started) / 1000)} s in all`)
  return ok ? 0 : 1
}

/** bench:ab's other build: `ref` checked out into a worktree under `root` and built with this checkout's node_modules. */
function buildRef (ref: string, root: string): Build {
  const commit = git('rev-parse', '--short', `${ref}^{commit}`)
  const worktree = join(root, 'ref')
  git('worktree', 'add', '--detach', worktree, commit)
  symlinkSync(join(ROOT, 'node_modules'), join(worktree, 'node_modules'))
  process.stderr.write(`bench:ab: building ${ref} (${commit})\n`)
  execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], { cwd: worktree, stdio: 'inherit' })
  return buildAt(worktree, commit.startsWith(ref) ? commit : `${ref} (${commit})`)
}

async function ab (ref: string | undefined): Promise<number> {
  if (ref === undefined || ref === '') fail('usage: npm run bench:ab -- <git ref> (BENCH_ROUNDS=8 rounds, BENCH_ONLY=scenarios)')
  const selected = select(settings.only ?? ['memory', 'sqlite', 'sqlite GET /plants/{id}'], false)
  if (selected.some((s) => s.server === 'framework')) fail('a framework row does not run the service: both builds would run the same server')
  wrkVersion()
  const modified = git('status', '--porcelain', '--', 'src', 'schemas', 'package.json') === '' ? '' : ', modified'
  const mine = buildAt(ROOT, `this checkout (${git('rev-parse', '--short', 'HEAD')}${modified})`)
  // Per scenario, per round: [this checkout, the ref].
  const rows = new Map<string, Array<[Row, Row]>>(selected.map((s) => [s.name, []]))
  const builds = await inTempDir(selected, async (root, noPostgres) => {
    const builds = [mine, buildRef(ref, root)]
    if (noPostgres !== undefined) fail(`the postgres scenarios cannot run: ${noPostgres}`)
    for (let round = 1; round <= settings.rounds; round++) {
      for (const scenario of selected) {
        const pair: Row[] = []
        for (const b of round % 2 === 1 ? [0, 1] : [1, 0]) pair[b] = await runScenario(scenario, builds[b], root)
        const [a, b] = pair
        rows.get(scenario.name)!.push([a, b])
        process.stderr.write(`  round ${round} ${scenario.name}: ${int(a.requestsPerSecond)}/s against ${int(b.requestsPerSecond)}/s, ratio ${(a.requestsPerSecond / b.requestsPerSecond).toFixed(3)}\n`)
      }
    }
    return builds
  })
  console.log(`\n${builds[0].name} against ${builds[1].name}: ${settings.rounds} alternating rounds of ${settings.seconds} s after ${settings.warmupSeconds} s of warm-up, ${settings.connections} connections; Node ${process.version}\n`)

  // Rounds faster: a change is shown only when most rounds agree with the median's direction.
  const lines = [['scenario', 'this requests/s', 'p99 ms', 'ref requests/s', 'p99 ms', 'ratio', 'rounds faster']]
  for (const [name, pairs] of rows) {
    const med = (pick: (pair: [Row, Row]) => number): number => median(pairs.map(pick))
    const faster = pairs.filter(([a, b]) => a.requestsPerSecond > b.requestsPerSecond).length
    lines.push([name, int(med(([a]) => a.requestsPerSecond)), ms(med(([a]) => a.p99Us)), int(med(([, b]) => b.requestsPerSecond)), ms(med(([, b]) => b.p99Us)),
      med(([a, b]) => a.requestsPerSecond / b.requestsPerSecond).toFixed(3), `${faster} of ${pairs.length}`])
  }
  console.log(`${table(lines)}\n\nmedians over the rounds; ratio: this checkout's requests/s over the ref's in the same round, above 1 is faster.`)
  const failed = [...rows.values()].flat(2).reduce((sum, row) => sum + row.errors, 0)
  if (failed > 0) console.log(`${int(failed)} requests failed: the comparison is not valid.`)
  return failed > 0 ? 1 : 0
}

try {
  process.exitCode = process.argv[2] === 'ab' ? await ab(process.argv[3]) : await bench()
} catch (err) {
  process.stderr.write(`bench: ${err instanceof BenchError ? err.message : (err as Error).stack}\n`)
  process.exitCode = 2
}
