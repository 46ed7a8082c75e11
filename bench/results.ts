/**
 * The results file: what bench/run.ts measured, as JSON, for bench/report.ts to print or
 * compare later. Its types, and the arithmetic every reader of it shares (requests/s,
 * errors, the median run), so the table and the comparison cannot disagree.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { CpuUse } from './machine.ts'
import type { RequestSpec } from './scenarios.ts'

/** What a load generator reports: wrk (bench/request.lua) and autocannon alike. */
export interface LoadResult {
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

export interface Measured {
  result: LoadResult
  cpu: CpuUse
  rssKb: number
  logBytesPerRequest?: number
  /** With a webhook subscriber: deliveries still pending right after the run, and received during it. */
  webhooks?: { pending: number, received: number }
}

/** One scenario's row. */
export interface Row {
  name: string
  /** The row whose requests/s counts as 1.00× for this one (baseline when unset). */
  compareTo?: string
  request: RequestSpec
  prefill?: number
  /** The measured runs, in order; the table shows the median by requests/s. */
  runs: Measured[]
  /** `skipped: …` or `FAILED: …` when the row has no runs. */
  error?: string
  loggedError?: string
}

/** One request's rates on a small store and on the filled one, measured in the same run, in turns. */
export interface SizeRate {
  request: string
  /** One run a round, in the order measured (a single result in files written before the rounds). */
  small: LoadResult[] | LoadResult
  filled: LoadResult[] | LoadResult
}

/** One store filled with `count` plants through POST /plants. */
export interface Footprint {
  store: string
  /** How many plants the small store held; with `rates`. */
  smallCount?: number
  rates?: SizeRate[]
  fill?: LoadResult & { seconds: number }
  rssEmptyKb?: number
  rssKb?: number
  hwmKb?: number
  disk?: { db: number, wal: number, shm: number }
  rows?: number
  error?: string
}

export interface BenchResults {
  /** ISO 8601, when the run started. */
  date: string
  machine: { cpuModel: string, cpuCount: number, kernel: string, loadAverage: number, tasksetFound: boolean, pinned: boolean }
  /** The Node every server and the runner ran on (process.version). */
  node: string
  load: { generator: string, version: string, connections: number, threads: number, warmupSeconds: number, seconds: number, runs: number }
  tempDir: string
  filesystem: string
  /** The body template of POST /plants. */
  createBody: string
  rows: Row[]
  /** Absent when the section was skipped (BENCH_SKIP_MILLION=1 or BENCH_MILLION=0). */
  footprint?: { count: number, stores: Footprint[] }
  totalSeconds?: number
}

export function rps (r: LoadResult): number {
  return r.durationUs > 0 ? r.requests / (r.durationUs / 1e6) : 0
}

export function socketErrors (r: LoadResult): number {
  return r.connectErrors + r.readErrors + r.writeErrors + r.timeouts
}

export function errorSummary (r: LoadResult): string {
  return `${r.statusErrors} non-2xx, ${r.connectErrors} connect, ${r.readErrors} read, ${r.writeErrors} write errors, ${r.timeouts} timeouts`
}

/** The run the table shows: the median by requests/s (the lower middle one of an even count). */
export function median (runs: Measured[]): Measured | undefined {
  return [...runs].sort((x, y) => rps(x.result) - rps(y.result))[Math.floor((runs.length - 1) / 2)]
}

/** Errors over all of a row's runs: any run with errors spoils the row, not only the one shown. */
export function rowErrors (row: Row): { status: number, socket: number } {
  return {
    status: row.runs.reduce((sum, run) => sum + run.result.statusErrors, 0),
    socket: row.runs.reduce((sum, run) => sum + socketErrors(run.result), 0)
  }
}

/** BENCH_RESULTS when set, else bench/results/<date>.json (the date with `-` for `:`). */
export function resultsPath (bench: string, date: string, configured?: string): string {
  return configured ?? join(bench, 'results', `${date.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-')}.json`)
}

export function writeResults (path: string, results: BenchResults): void {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, JSON.stringify(results, null, 2) + '\n')
}

export function readResults (path: string): BenchResults {
  const results = JSON.parse(readFileSync(path, 'utf8')) as BenchResults
  if (!Array.isArray(results.rows) || typeof results.date !== 'string') throw new Error(`${path} is not a bench results file`)
  return results
}
