import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type pg from 'pg'
import type { Test } from 'tap'
import { postPlant, TOKEN } from './app.ts'
import type { PostgresServer } from './postgres-cluster.ts'
import { pgClient } from './postgres.ts'
import { startServer, type RunningServer } from './server.ts'
import { retryUntil } from './wait.ts'

// The service on a PostgreSQL that fails it: what the outage and session tests share.

// The store's statement timeout in the driver; the bounds below leave room for a busy machine.
export const STATEMENT_TIMEOUT_MS = 4000

/** A request and how long its answer took. */
export async function timed (request: () => Promise<LightMyRequestResponse>): Promise<{ res: LightMyRequestResponse, ms: number }> {
  const started = Date.now()
  const res = await request()
  return { res, ms: Date.now() - started }
}

export const SERVICE_SESSION = "application_name = 'plant-store'"

/** Has the server end the service's sessions on the administrator's database that are idle now; their process ids. */
export async function endIdleSessions (admin: pg.Client): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number, ended: boolean }>(`SELECT pid, pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE ${SERVICE_SESSION} AND state = 'idle' AND datname = current_database()`)
  return rows.filter(({ ended }) => ended).map(({ pid }) => pid)
}

/** The service on the database at `url` (and `env`), holding plant 1, named "p1". */
export async function serviceHoldingPlant (t: Test, url: string, env: Record<string, string> = {}): Promise<RunningServer> {
  const service = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: url, ...env })
  t.equal((await service.request('POST', '/plants', { body: { id: 1, name: 'p1' } })).statusCode, 200, 'plant 1 created')
  return service
}

/**
 * The service, holding plant 1, on a new database whose sessions the server ends after
 * `idleMs` idle (idle_session_timeout), and an administrator's connection to it.
 */
export async function serviceEndedWhenIdle (t: Test, server: PostgresServer, database: string, idleMs: number): Promise<{ admin: pg.Client, service: RunningServer }> {
  const url = await server.createDatabase(database)
  const admin = await pgClient(t, url)
  await admin.query(`ALTER DATABASE ${database} SET idle_session_timeout = ${idleMs}`)
  return { admin, service: await serviceHoldingPlant(t, url) }
}

/** Creates a plant until one is answered 200; how long that took after the database came back. */
export async function servedAgain (app: FastifyInstance, id: number): Promise<{ status: number, ms: number }> {
  const { value, ms } = await retryUntil(async () => (await postPlant(app, { id, name: 'after' })).statusCode, (status) => status === 200, 10_000)
  return { status: value, ms }
}

/** A service holding plant 1 on a database of its own (at `url`), and a transaction holding a lock of `mode` on its plants table. */
export async function plantsLocked (t: Test, server: PostgresServer, database: string, mode: string, env?: Record<string, string>): Promise<{ url: string, service: RunningServer, unlock: () => Promise<void> }> {
  const url = await server.createDatabase(database)
  const service = await serviceHoldingPlant(t, url, env)
  const admin = await pgClient(t, url)
  await admin.query('BEGIN')
  await admin.query(`LOCK TABLE plants IN ${mode} MODE`)
  return { url, service, unlock: async () => { await admin.query('COMMIT') } }
}
