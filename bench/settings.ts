/**
 * What every part of the bench runner shares: its settings, read once from the
 * environment (the list is in bench/run.ts's top comment), the paths it runs from, the
 * bearer token its servers accept, and BenchError, a failure it explains itself.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const BENCH = join(ROOT, 'bench')
export const SERVICE_ENTRY = join(ROOT, 'dist', 'src', 'server.js')
/** The Node flags `npm start` gives the service (its young-generation cap), read from package.json: the bench runs it as shipped. */
export const SERVICE_NODE_FLAGS: string[] = startFlags(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start)

export function startFlags (start: string): string[] {
  const flags = /^exec node ((?:--\S+ )*)dist\/src\/server\.js$/.exec(start)?.[1]
  // Read wrongly, the bench would measure a service other than the one npm start runs.
  if (flags === undefined) throw new Error(`bench/settings.ts cannot read the Node flags of npm start: "${start}"`)
  return flags.split(' ').filter((flag) => flag !== '')
}

export const settings = {
  seconds: envNumber('BENCH_SECONDS', 10),
  warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 3),
  runs: Math.max(1, envNumber('BENCH_RUNS', 1)),
  connections: envNumber('BENCH_CONNECTIONS', 50),
  threads: envNumber('BENCH_THREADS', 2),
  million: envNumber('BENCH_MILLION', 1_000_000),
  skipMillion: process.env.BENCH_SKIP_MILLION === '1',
  sizeRounds: Math.max(1, envNumber('BENCH_SIZE_ROUNDS', 2)),
  // Names separated by commas; a comma followed by a space is a name's own ('postgres, no group commit').
  only: process.env.BENCH_ONLY?.split(/,(?! )/).map((s) => s.trim()).filter((s) => s !== ''),
  keep: process.env.BENCH_KEEP === '1',
  /** Where the results JSON goes; undefined: bench/results/<date>.json. */
  results: process.env.BENCH_RESULTS === '' ? undefined : process.env.BENCH_RESULTS
}

export const TOKEN = `bench-${randomBytes(12).toString('base64url')}`

export function envNumber (name: string, fallback: number): number {
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
export class BenchError extends Error {}

export function fail (message: string): never {
  throw new BenchError(message)
}
