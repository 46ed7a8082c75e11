/**
 * The Plant Store benchmark: `npm run bench` (builds first), or after a build
 * `npx tsx bench/run.ts`. Prints markdown to stdout, progress to stderr, and writes
 * what it measured as JSON (see BENCH_RESULTS) for bench/report.ts to print or compare.
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
 *   BENCH_ONLY=a,b           only the scenarios with these names ('postgres, no group commit' is one)
 *   BENCH_MILLION=1000000    plants stored for the footprint section (memory, disk, and
 *                            SQLite's rates there against a store of 1,000)
 *   BENCH_SKIP_MILLION=1     skip that section
 *   BENCH_SIZE_ROUNDS=2      rounds of those rates, each store first in every other round
 *   BENCH_LOAD=wrk|autocannon   force a load generator
 *   BENCH_POSTGRES_URL=postgres://…   the postgres rows' database, instead of a throwaway cluster
 *   BENCH_KEEP=1             keep the temp dir (server logs, databases)
 *   BENCH_RESULTS=path.json  where the results JSON goes; default bench/results/<date>.json
 *
 * This file is the run's lifecycle: the temp dir, the cluster, the order of the
 * sections, the exit code. The parts: scenarios.ts (what is measured), measure.ts and
 * footprint.ts (how), server.ts, load.ts, processes.ts and machine.ts (the processes
 * and /proc), results.ts (the JSON) and markdown.ts (the tables).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { postgresUnavailable, startPostgres } from '../scripts/postgres-cluster.ts'
import { footprint } from './footprint.ts'
import { pickLoadGenerator } from './load.ts'
import { cpuCount, cpuModel, filesystemOf } from './machine.ts'
import { closing, footprintSection, header, scenarioSection } from './markdown.ts'
import { emptyRow, runScenario } from './measure.ts'
import { cleanUpOnExit, killAll, pin, tasksetFound } from './processes.ts'
import { resultsPath, writeResults, type BenchResults, type Footprint } from './results.ts'
import { cluster, createPlant, footprintStores, scenarios } from './scenarios.ts'
import { BENCH, BenchError, fail, SERVICE_ENTRY, settings } from './settings.ts'

/** The run's temp dir, removed however the run ends (unless BENCH_KEEP=1). */
let tempRoot: string | undefined

function cleanUp (): void {
  killAll()
  if (tempRoot === undefined) return
  if (settings.keep) process.stderr.write(`bench: kept ${tempRoot}\n`)
  else rmSync(tempRoot, { recursive: true, force: true })
  tempRoot = undefined
}

cleanUpOnExit('bench', cleanUp)

const print = (lines: string[]): void => console.log(lines.join('\n'))

async function main (): Promise<number> {
  const started = Date.now()
  if (!existsSync(SERVICE_ENTRY)) fail(`${SERVICE_ENTRY} is missing: run npm run build first (npm run bench does)`)
  const load = pickLoadGenerator()
  const root = mkdtempSync(join(tmpdir(), 'plant-bench-'))
  tempRoot = root
  let ok = true
  // The throwaway PostgreSQL cluster's own clean-up, run after the rows.
  const teardowns: Array<() => unknown> = []
  let results: BenchResults
  try {
    results = {
      date: new Date().toISOString(),
      machine: {
        cpuModel,
        cpuCount,
        kernel: readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim(),
        loadAverage: Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
        tasksetFound,
        pinned: pin
      },
      node: process.version,
      load: { generator: load.name, version: load.version, connections: settings.connections, threads: settings.threads, warmupSeconds: settings.warmupSeconds, seconds: settings.seconds, runs: settings.runs },
      tempDir: root,
      filesystem: filesystemOf(root),
      createBody: createPlant.body ?? '',
      rows: []
    }
    print(header(results))

    const unknown = settings.only?.filter((name) => !scenarios.some((s) => s.name === name)) ?? []
    if (unknown.length > 0) fail(`BENCH_ONLY: no scenario ${unknown.map((name) => `'${name}'`).join(', ')} (there are: ${scenarios.map((s) => `'${s.name}'`).join(', ')})`)
    const selected = settings.only === undefined ? scenarios : scenarios.filter((s) => settings.only!.includes(s.name))
    if (cluster.url === undefined && postgresUnavailable() === undefined && selected.some((s) => s.name.startsWith('postgres'))) {
      process.stderr.write('bench: starting a throwaway PostgreSQL cluster\n')
      cluster.url = (await startPostgres({ teardown: (fn) => { teardowns.push(fn) } })).url
    }
    for (const scenario of selected) {
      try {
        results.rows.push(await runScenario(scenario, load, root))
      } catch (err) {
        // One broken row should not cost the others: report it and go on.
        if (!(err instanceof BenchError)) throw err
        process.stderr.write(`bench: ${scenario.name} failed: ${err.message}\n`)
        results.rows.push({ ...emptyRow(scenario), error: `FAILED: ${err.message.split('\n')[0]}` })
      }
    }
    const rows = scenarioSection(results)
    print(rows.lines)
    ok = rows.valid && ok

    if (!settings.skipMillion && settings.million !== 0) {
      const stores: Footprint[] = []
      results.footprint = { count: settings.million, stores }
      for (const [store, spec, { rates }] of footprintStores) {
        try {
          stores.push(await footprint(store, spec, load, root, settings.million, rates))
        } catch (err) {
          if (!(err instanceof BenchError)) throw err
          process.stderr.write(`bench: footprint ${store} failed: ${err.message}\n`)
          stores.push({ store, error: err.message.split('\n')[0] })
        }
      }
    }
    const footprints = footprintSection(results)
    print(footprints.lines)
    ok = footprints.valid && ok
  } finally {
    for (const teardown of teardowns.reverse()) await teardown()
    cleanUp()
  }
  results.totalSeconds = (Date.now() - started) / 1000
  const path = resolve(resultsPath(BENCH, results.date, settings.results))
  writeResults(path, results)
  process.stderr.write(`bench: results in ${path}\n`)
  print(closing(results.totalSeconds, ok))
  return ok ? 0 : 1
}

try {
  process.exitCode = await main()
} catch (err) {
  cleanUp()
  process.stderr.write(`bench: ${err instanceof BenchError ? err.message : (err as Error).stack ?? String(err)}\n`)
  process.exitCode = 2
}
