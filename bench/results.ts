/**
 * What measuring a scenario yields: wrk's figures for a run, the server's around it, and a
 * scenario's row as bench/results/<date>.json stores it; with the figures derived from them.
 */
import type { RequestSpec } from './scenarios.ts'

/** What wrk reports (bench/request.lua's BENCH_RESULT line). */
export interface LoadResult {
  requests: number
  durationUs: number
  p50Us: number
  p99Us: number
  maxUs: number
  /** Answers with a status of 400 or more. */
  statusErrors: number
  connectErrors: number
  readErrors: number
  writeErrors: number
  timeouts: number
}

export interface Measured {
  result: LoadResult
  /** The server's CPU time over the run, as a share of one core. */
  cpu: { server: number, load: number }
  rssKb: number
  logBytesPerRequest?: number
  /** Deliveries received during the run, and still pending after it. */
  webhooks?: { received: number, pending?: number }
}

export interface Row {
  name: string
  compareTo: string
  request: RequestSpec
  prefill?: number
  runs: Measured[]
  /** The median run's figures, and its ratio to the compareTo row's. */
  requestsPerSecond?: number
  p50Us?: number
  p99Us?: number
  ratio?: number
  /** BENCH_PROFILE: the last run's µs of CPU per request, by part (bench/profile.ts). */
  profile?: Record<string, number>
  /** `skipped: …` or `FAILED: …` when the row has no runs. */
  error?: string
}

export const rps = (r: LoadResult): number => r.durationUs > 0 ? r.requests / (r.durationUs / 1e6) : 0
export const errors = (r: LoadResult): number => r.statusErrors + r.connectErrors + r.readErrors + r.writeErrors + r.timeouts
