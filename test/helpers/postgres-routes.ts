/**
 * The two ways the service reaches PostgreSQL, which the tests that span instances each run:
 * directly, and through PgBouncer in transaction mode with a server pool (POOL_SIZE) smaller
 * than the instances' pools together. One cluster, and one PgBouncer in front of it, serve
 * a whole test file: the routes of a file run one after the other.
 */
import { pgbouncerUnavailable, POOL_SIZE, startPgBouncer, type PgBouncer } from './pgbouncer.ts'
import { postgresUnavailable, startPostgres, type PostgresServer, type Teardowns } from './postgres-cluster.ts'

export { POOL_SIZE }

export interface Reached {
  /** Creates an empty database; returns the URL the service is given. */
  createDatabase (name: string): Promise<string>
  /** A URL the service is given, as the test's own clients reach it: directly, taking no server connection of PgBouncer's. */
  direct (url: string): string
  /** Stops what the service connects to (PostgreSQL, or PgBouncer): its connections are closed, new ones refused. */
  stop (): Promise<void>
  start (): Promise<void>
  /** Set on the route through PgBouncer. */
  bouncer?: PgBouncer
}

export interface Route {
  /** What the test's name says: "directly" or "through PgBouncer". */
  name: string
  /** Why the route cannot run here, or undefined. */
  skip: string | undefined
  /** The file's cluster (and PgBouncer), started at the first call of either route. */
  reach: () => Promise<Reached>
}

/** Both routes, over one cluster that `file` (the file's own tap object) tears down at its end. */
export function postgresRoutes (file: Teardowns): Route[] {
  let cluster: Promise<PostgresServer> | undefined
  let pooler: Promise<PgBouncer> | undefined
  const server = async (): Promise<PostgresServer> => await (cluster ??= startPostgres(file))
  const direct = async (): Promise<Reached> => {
    const database = await server()
    return { createDatabase: database.createDatabase, direct: (url) => url, stop: database.stop, start: database.start }
  }
  const pooled = async (): Promise<Reached> => {
    const database = await server()
    const bouncer = await (pooler ??= startPgBouncer(file, database))
    return {
      // Named apart from the direct route's, on the same cluster.
      createDatabase: async (name) => bouncer.through(await database.createDatabase(`${name}_pooled`)),
      direct: (url) => {
        const port = new URL(database.url).port
        const at = new URL(url)
        at.port = port
        return at.href
      },
      stop: bouncer.stop,
      start: bouncer.start,
      bouncer
    }
  }
  return [
    { name: 'directly', skip: postgresUnavailable(), reach: direct },
    { name: 'through PgBouncer', skip: pgbouncerUnavailable(), reach: pooled }
  ]
}
