/**
 * What the bench measures and for how long: its settings and its scenarios as data. Add a scenario by adding a row.
 *   BENCH_SECONDS=10  BENCH_WARMUP_SECONDS=3   each measured run, and the warm-up before it
 *   BENCH_CONNECTIONS=50      wrk -c (2 threads)
 *   BENCH_PREFILL=100000      plants stored before the reads and updates
 *   BENCH_ONLY=a,b            only these scenarios ('sqlite, no group commit' is one name)
 *   BENCH_POSTGRES_URL=…      the postgres rows' database; else a throwaway cluster if PostgreSQL is installed
 *   BENCH_ROUNDS=8            bench:ab: alternating rounds
 *   BENCH_TRACING=1           the services trace every request, exported to a local sink
 *   BENCH_PROFILE=1           the servers run under node --cpu-prof: each row's CPU per request, by part
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pgbouncerUnavailable, startPgBouncer } from '../test/helpers/pgbouncer.ts'
import { postgresUnavailable, startPostgres, type Teardowns } from '../test/helpers/postgres-cluster.ts'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))

function whole (name: string, fallback: number): number {
  const value = Number(process.env[name] || fallback)
  return Number.isInteger(value) && value >= 0 ? value : fail(`${name} must be a whole number, not ${JSON.stringify(process.env[name])}`)
}

export const settings = {
  seconds: whole('BENCH_SECONDS', 10),
  warmupSeconds: whole('BENCH_WARMUP_SECONDS', 3),
  rounds: Math.max(1, whole('BENCH_ROUNDS', 8)),
  connections: whole('BENCH_CONNECTIONS', 50),
  threads: 2,
  prefill: whole('BENCH_PREFILL', 100_000),
  // Comma-separated names; a comma followed by a space belongs to a name ('sqlite, no group commit').
  only: process.env.BENCH_ONLY?.split(/,(?! )/).map((s) => s.trim()).filter((s) => s !== ''),
  tracing: process.env.BENCH_TRACING === '1',
  profile: process.env.BENCH_PROFILE === '1'
}

export interface RequestSpec {
  method: string
  /** `{id}` is replaced by the request's id, `{n}` by a number no request of the run sent before, in path and body alike. */
  path: string
  body?: string
  /** Ids cycle over the prefilled plants 1..prefill; otherwise every request sends a fresh id. */
  existing?: boolean
}

export interface Scenario {
  name: string
  /** 'framework': bench/framework.ts; otherwise the service's environment, `dir` being the scenario's temp dir. */
  server: 'framework' | ((dir: string) => Record<string, string>)
  request: RequestSpec
  /** Plants 1..prefill created through POST /plants before the warm-up. */
  prefill?: number
  postgres?: boolean
  /** Subscribed to a local receiver that answers 200 at once. */
  webhook?: boolean
  /** A service row on the same store whose requests/s the output sets beside this row's. */
  beside?: string
}

export const createPlant: RequestSpec = { method: 'POST', path: '/plants', body: '{"id":{id},"name":"Monstera deliciosa","tag":"tropical"}' }
const getPlant: RequestSpec = { method: 'GET', path: '/plants/{id}', existing: true }
// A fresh name every request: an update that changes nothing writes nothing.
const updatePlant: RequestSpec = { method: 'PUT', path: '/plants/{id}', body: '{"name":"Monstera {n}","tag":"tropical"}', existing: true }
const getPage: RequestSpec = { method: 'GET', path: '/plants?limit=100' }

/** BENCH_POSTGRES_URL, or the throwaway cluster withPostgres starts; `pooled`: that cluster through a throwaway PgBouncer. */
const cluster: { url?: string, pooled?: string } = { url: process.env.BENCH_POSTGRES_URL }

const memory = (): Record<string, string> => ({ DATABASE_URL: 'memory:' })
const sqlite = (env: Record<string, string> = {}) => (dir: string) => ({ DATABASE_URL: `sqlite:${join(dir, 'plants.db')}`, ...env })
const postgres = (env: Record<string, string> = {}) => () => ({ DATABASE_URL: cluster.url ?? '', ...env })
const pgbouncer = (): Record<string, string> => ({ DATABASE_URL: cluster.pooled ?? fail(`no PgBouncer: ${pgbouncerUnavailable() ?? 'one starts only with the throwaway cluster'}`) })
// One commit per create: what group commit buys is the difference to the row without it.
const noGroupCommit = { GROUP_COMMIT_MAX_BATCH: '1' }

// Each framework row sends a request of its own: every other row's ratio is to the framework row of its request.
export const scenarios: Scenario[] = [
  { name: 'framework', server: 'framework', request: createPlant },
  { name: 'memory', server: memory, request: createPlant },
  { name: 'sqlite', server: sqlite(), request: createPlant },
  { name: 'sqlite with a webhook subscriber', server: sqlite({ WEBHOOK_ALLOW_PRIVATE: 'true' }), request: createPlant, webhook: true },
  { name: 'sqlite, no group commit', server: sqlite(noGroupCommit), request: createPlant },
  { name: 'postgres', server: postgres(), request: createPlant, postgres: true },
  { name: 'postgres, no group commit', server: postgres(noGroupCommit), request: createPlant, postgres: true },
  { name: 'postgres, prepared statements', server: postgres({ DATABASE_PREPARED_STATEMENTS: 'true' }), request: createPlant, postgres: true, beside: 'postgres' },
  // Transaction mode, a pool of 4 server connections, its other settings the defaults.
  { name: 'postgres through PgBouncer', server: pgbouncer, request: createPlant, postgres: true, beside: 'postgres' },
  // Creates beside BENCH_PREFILL plants: with the row above, whether a create's cost grows with the store.
  { name: 'sqlite POST /plants over the prefill', server: sqlite(), request: createPlant, prefill: settings.prefill, beside: 'sqlite' },
  { name: 'framework PUT /plants/{id}', server: 'framework', request: updatePlant, prefill: settings.prefill },
  { name: 'sqlite PUT /plants/{id}', server: sqlite(), request: updatePlant, prefill: settings.prefill, beside: 'sqlite' },
  { name: 'framework GET /plants/{id}', server: 'framework', request: getPlant, prefill: settings.prefill },
  { name: 'sqlite GET /plants/{id}', server: sqlite(), request: getPlant, prefill: settings.prefill },
  { name: 'framework GET /plants?limit=100', server: 'framework', request: getPage, prefill: settings.prefill },
  { name: 'sqlite GET /plants?limit=100', server: sqlite(), request: getPage, prefill: settings.prefill }
]

/** The framework row a scenario's ratio is taken to: bare Fastify answering the same request. */
export const frameworkOf = (scenario: Scenario): Scenario => scenarios.find((s) => s.server === 'framework' && s.request === scenario.request)!

/** The scenarios named, in their order here; with `references`, their framework rows too, so that every ratio is taken in the same run. */
export function select (names: string[] | undefined, references: boolean): Scenario[] {
  if (names === undefined) return scenarios
  const unknown = names.filter((name) => !scenarios.some((s) => s.name === name))
  if (unknown.length > 0) fail(`BENCH_ONLY: no scenario ${unknown.map((n) => `'${n}'`).join(', ')} (there are: ${scenarios.map((s) => `'${s.name}'`).join(', ')})`)
  return scenarios.filter((s) => names.includes(s.name) || (references && scenarios.some((t) => names.includes(t.name) && frameworkOf(t) === s)))
}

/** Starts a throwaway cluster (and PgBouncer) when a selected scenario needs PostgreSQL and none is given; else says why they cannot run. */
export async function withPostgres (selected: Scenario[], at: Teardowns): Promise<string | undefined> {
  if (cluster.url !== undefined || !selected.some((s) => s.postgres === true)) return undefined
  const why = postgresUnavailable()
  if (why !== undefined) return why
  process.stderr.write('bench: starting a throwaway PostgreSQL cluster\n')
  const server = await startPostgres(at)
  cluster.url = server.url
  if (selected.some((s) => s.server === pgbouncer) && pgbouncerUnavailable() === undefined) cluster.pooled = (await startPgBouncer(at, server)).through(server.url)
  return undefined
}

/** A service build: its entry point and the Node flags `npm start` gives it, so it runs as shipped. */
export interface Build { name: string, entry: string, flags: string[] }

export function buildAt (root: string, name: string): Build {
  const start: string = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start
  const flags = /^exec node ((?:--\S+ )*)dist\/src\/server\.js$/.exec(start)?.[1]
  if (flags === undefined) fail(`cannot read the Node flags of npm start in ${root}: "${start}"`)
  const entry = join(root, 'dist', 'src', 'server.js')
  if (!existsSync(entry)) fail(`${entry} is missing: run npm run build first (npm run bench does)`)
  return { name, entry, flags: flags.split(' ').filter((f) => f !== '') }
}

/** A failure the bench explains in one message, without a stack. */
export class BenchError extends Error {}
export function fail (message: string): never { throw new BenchError(message) }
