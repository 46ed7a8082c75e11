/**
 * The Plant Store benchmark: `npm run bench` (builds first). Each scenario starts its own server in
 * a fresh temp dir, one at a time, and loads it with wrk. Prints each scenario's requests/s, p99 and
 * ratio to its framework row (bare Fastify doing the same work) as a table, and writes everything
 * measured as JSON to bench/results/<date>.json.
 *
 * Environment:
 *   BENCH_SECONDS=10  BENCH_WARMUP_SECONDS=3   each measured run, and the warm-up before it
 *   BENCH_RUNS=1              measured runs per scenario; the table shows the median
 *   BENCH_CONNECTIONS=50  BENCH_THREADS=2   wrk -c and -t
 *   BENCH_PREFILL=100000      plants stored before the reads and updates
 *   BENCH_ONLY=a,b            only these scenarios ('sqlite, no group commit' is one name)
 *   BENCH_POSTGRES_URL=…      the postgres rows' database; else a throwaway cluster if PostgreSQL is installed
 *   BENCH_RESULTS=path.json   where the JSON goes   BENCH_KEEP=1   keep the temp dir (logs, databases)
 *   BENCH_ROUNDS=8            bench:ab only: alternating rounds
 *   BENCH_TRACING=1           the services trace every request, exported to a local sink (bench/otlp-sink.ts)
 *   BENCH_PROFILE=1           the servers run under node --cpu-prof: prints each row's CPU per request by part (bench/profile.ts)
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { int, ms, pinned, runScenario, table, wrkVersion } from './measure.ts'
import { partsTable } from './profile.ts'
import { errors, type Row } from './results.ts'
import { BenchError, buildAt, createPlant, ROOT, select, settings, withPostgres } from './scenarios.ts'

async function main (): Promise<number> {
  const started = Date.now()
  const build = buildAt(ROOT, 'this checkout')
  const selected = select(settings.only, true)
  const load = { generator: 'wrk', version: wrkVersion(), connections: settings.connections, threads: settings.threads, warmupSeconds: settings.warmupSeconds, seconds: settings.seconds, runs: settings.runs }
  const results = {
    date: new Date().toISOString(),
    machine: { cpuModel: cpus()[0]?.model ?? 'unknown', cpuCount: cpus().length, kernel: readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim(), loadAverage: loadavg()[0], pinned },
    node: process.version,
    load,
    createBody: createPlant.body,
    rows: [] as Row[],
    totalSeconds: 0
  }
  const { machine } = results
  console.log(`${results.date}: Node ${results.node}, ${machine.cpuModel} × ${machine.cpuCount}, load average ${machine.loadAverage.toFixed(2)}${machine.loadAverage > 0.5 ? ' (the machine is busy: numbers will be noisy)' : ''}`)
  console.log(`wrk ${load.version}, ${load.connections} connections, ${load.threads} threads, ${load.warmupSeconds} s warm-up, ${load.seconds} s × ${load.runs} measured; ${pinned ? 'server on core 0, wrk on core 1' : 'not pinned (taskset or a second core missing)'}\n`)

  const root = mkdtempSync(join(tmpdir(), 'plant-bench-'))
  const teardowns: Array<() => Promise<void>> = []
  const cleanUp = (): void => { if (!settings.keep) rmSync(root, { recursive: true, force: true }) }
  process.once('exit', cleanUp)
  try {
    const noPostgres = await withPostgres(selected, teardowns)
    for (const scenario of selected) {
      const empty: Row = { name: scenario.name, compareTo: scenario.compareTo, request: scenario.request, prefill: scenario.prefill, runs: [] }
      if (scenario.postgres === true && noPostgres !== undefined) {
        results.rows.push({ ...empty, error: `skipped: ${noPostgres}` })
        continue
      }
      try {
        results.rows.push(await runScenario(scenario, build, root))
      } catch (err) {
        // One broken row should not cost the others.
        if (!(err instanceof BenchError)) throw err
        process.stderr.write(`bench: ${scenario.name} failed: ${err.message}\n`)
        results.rows.push({ ...empty, error: `FAILED: ${err.message.split('\n')[0]}` })
      }
    }
  } finally {
    for (const teardown of teardowns.reverse()) await teardown()
    if (settings.keep) process.stderr.write(`bench: kept ${root}\n`)
    cleanUp()
  }

  let ok = true
  const lines = [['scenario', 'requests/s', 'p50 ms', 'p99 ms', 'ratio', 'to', 'errors', 'server CPU', 'wrk CPU']]
  for (const row of results.rows) {
    const reference = results.rows.find((r) => r.name === row.compareTo)?.requestsPerSecond
    if (row.requestsPerSecond !== undefined && reference !== undefined && reference > 0) row.ratio = Number((row.requestsPerSecond / reference).toFixed(3))
    const failed = row.runs.reduce((sum, run) => sum + errors(run.result), 0)
    if (failed > 0 || row.error?.startsWith('FAILED') === true) ok = false
    lines.push(row.error !== undefined
      ? [row.name, row.error.slice(0, 70), '', '', '', '', '', '', '']
      : [row.name, int(row.requestsPerSecond!), ms(row.p50Us!), ms(row.p99Us!), row.ratio?.toFixed(2) ?? '–', row.compareTo === row.name ? 'itself' : row.compareTo,
          failed > 0 ? `${int(failed)} INVALID` : '0', ...(['server', 'load'] as const).map((who) => `${Math.round(row.runs.at(-1)!.cpu[who] * 100)}%`)])
  }
  console.log(table(lines))
  for (const { name, beside } of selected) {
    const [mine, theirs] = [name, beside].map((n) => results.rows.find((r) => r.name === n)?.requestsPerSecond)
    if (mine !== undefined && theirs !== undefined && theirs > 0) console.log(`${name}: ${(mine / theirs).toFixed(2)}× the requests/s of ${beside} on the same store (${int(mine)}/s against ${int(theirs)}/s)`)
  }
  const profiled = results.rows.filter((row) => row.profile !== undefined).map((row) => ({ name: row.name, parts: row.profile! }))
  if (profiled.length > 0) console.log(`\nWhere the CPU goes (profiled: the profiler's own cost is in every column)\n${table(partsTable(profiled))}`)
  for (const row of results.rows) {
    const hooks = row.runs.at(-1)?.webhooks
    if (hooks !== undefined) console.log(`${row.name}: ${int(hooks.received)} deliveries received during the run, ${hooks.pending ?? 'unknown'} pending after it`)
  }

  results.totalSeconds = Math.round((Date.now() - started) / 1000)
  const path = settings.results ?? join(ROOT, 'bench', 'results', `${results.date.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-')}.json`)
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, JSON.stringify(results, null, 2) + '\n')
  console.log(`\n${ok ? '' : 'SOME ROWS FAILED OR HAD ERRORS: they are not valid measurements.\n'}results in ${path}, ${results.totalSeconds} s in all`)
  return ok ? 0 : 1
}

try {
  process.exitCode = await main()
} catch (err) {
  process.stderr.write(`bench: ${err instanceof BenchError ? err.message : (err as Error).stack}\n`)
  process.exitCode = 2
}
