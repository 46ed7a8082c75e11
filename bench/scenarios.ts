/**
 * The bench's scenarios, as data: which server each one starts, which request it sends,
 * what it stores first. Add a row to `scenarios`; nothing else in bench/ needs to change.
 * The servers and the create request are also what the footprint section fills.
 */
import { join } from 'node:path'
import { postgresUnavailable } from '../scripts/postgres-cluster.ts'
import { BENCH, SERVICE_ENTRY, SERVICE_NODE_FLAGS } from './settings.ts'

export interface RequestSpec {
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

export interface ServerSpec {
  /** Arguments after `node`. */
  argv: string[]
  /** The server's environment besides HOST, PORT, API_TOKENS and LOG_LEVEL; `dir` is the scenario's own fresh temp dir. */
  env: (dir: string) => Record<string, string>
}

export interface Scenario {
  name: string
  server: ServerSpec
  request: RequestSpec
  /** Plants 1..prefill created through POST /plants after start, before the warm-up. */
  prefill?: number
  /** The row whose requests/s counts as 1.00× for this one. */
  compareTo?: string
  /** Why this row cannot run here (say, no PostgreSQL to talk to); undefined when it can. */
  skip?: () => string | undefined
  /** Subscribed to a local receiver answering 200 before the warm-up; each run records the deliveries still pending after it. */
  webhook?: boolean
}

const baselineServer: ServerSpec = { argv: ['--import', 'tsx', join(BENCH, 'baseline.ts')], env: () => ({}) }
const frameworkServer: ServerSpec = { argv: ['--import', 'tsx', join(BENCH, 'framework.ts')], env: () => ({}) }

function service (databaseUrl: (dir: string) => string, env: Record<string, string> = {}): ServerSpec {
  return { argv: [...SERVICE_NODE_FLAGS, SERVICE_ENTRY], env: (dir) => ({ DATABASE_URL: databaseUrl(dir), ...env }) }
}

const memory = service(() => 'memory:')
const sqlite = service((dir) => `sqlite:${join(dir, 'plants.db')}`)
// One commit per write: what group commit buys is the difference to the row above it.
const noGroupCommit = { GROUP_COMMIT_MAX_BATCH: '1' }
/** The PostgreSQL rows' cluster: BENCH_POSTGRES_URL, or set by run.ts to one it starts. */
export const cluster: { url?: string } = { url: process.env.BENCH_POSTGRES_URL }
const postgres = (env: Record<string, string> = {}) => service(() => cluster.url ?? '', env)
const needsPostgres = (): string | undefined => cluster.url === undefined ? postgresUnavailable() ?? 'no PostgreSQL cluster' : undefined

export const createPlant: RequestSpec = {
  method: 'POST',
  path: '/plants',
  body: '{"id":{id},"name":"Monstera deliciosa","tag":"tropical"}'
}

export const getPlant: RequestSpec = { method: 'GET', path: '/plants/{id}', ids: 'prefilled' }
const getPage: RequestSpec = { method: 'GET', path: '/plants?limit=100' }
/** A page anywhere in the store: the first page would cost the same at any size. */
export const getPageAfter: RequestSpec = { method: 'GET', path: '/plants?limit=100&after={id}', ids: 'prefilled' }

export const scenarios: Scenario[] = [
  { name: 'baseline', server: baselineServer, request: createPlant },
  // What Fastify alone costs: the service's rows are read against this one too.
  { name: 'framework', server: frameworkServer, request: createPlant },
  { name: 'memory', server: memory, request: createPlant },
  { name: 'sqlite', server: sqlite, request: createPlant },
  // The webhook's cost: against the same store without a subscriber.
  { name: 'sqlite with a webhook subscriber', server: service((dir) => `sqlite:${join(dir, 'plants.db')}`, { WEBHOOK_ALLOW_PRIVATE: 'true' }), request: createPlant, webhook: true, compareTo: 'sqlite' },
  { name: 'sqlite, no group commit', server: service((dir) => `sqlite:${join(dir, 'plants.db')}`, noGroupCommit), request: createPlant },
  { name: 'postgres', server: postgres(), request: createPlant, skip: needsPostgres },
  { name: 'postgres, no group commit', server: postgres(noGroupCommit), request: createPlant, skip: needsPostgres },
  // Reads, each against the bare server doing the same read from memory, and what
  // Fastify alone costs for it.
  { name: 'baseline GET /plants/{id}', server: baselineServer, prefill: 100_000, request: getPlant, compareTo: 'baseline GET /plants/{id}' },
  { name: 'framework GET /plants/{id}', server: frameworkServer, prefill: 100_000, request: getPlant, compareTo: 'baseline GET /plants/{id}' },
  { name: 'sqlite GET /plants/{id}', server: sqlite, prefill: 100_000, request: getPlant, compareTo: 'baseline GET /plants/{id}' },
  { name: 'baseline GET /plants?limit=100', server: baselineServer, prefill: 100_000, request: getPage, compareTo: 'baseline GET /plants?limit=100' },
  { name: 'framework GET /plants?limit=100', server: frameworkServer, prefill: 100_000, request: getPage, compareTo: 'baseline GET /plants?limit=100' },
  { name: 'sqlite GET /plants?limit=100', server: sqlite, prefill: 100_000, request: getPage, compareTo: 'baseline GET /plants?limit=100' }
]

/** The footprint section's stores, filled in this order; rates: whether its rates are compared with a small store's. */
export const footprintStores = [['sqlite', sqlite, { rates: true }], ['memory', memory, { rates: false }]] as const
/** The small store the filled one's rates are compared with. */
export const SMALL_STORE = 1000
