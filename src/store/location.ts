import { resolve } from 'node:path'
import type { DatabaseConfig } from './open.ts'

/**
 * Where the store keeps plants, for an operator to read in the start line: the SQLite
 * file's absolute path, PostgreSQL's host, port and database (never its user or
 * password), or `memory`.
 */
export function storeLocation (database: DatabaseConfig): string {
  switch (database.engine) {
    case 'memory': return 'memory'
    case 'sqlite': return database.path === ':memory:' ? 'memory' : resolve(database.path)
    case 'postgres': return postgresLocation(database.url)
  }
}

function postgresLocation (raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'an unparsable PostgreSQL URL' // the driver will say more; nothing of it is echoed
  }
  // A socket directory may come as ?host=; left out, the driver reads PGHOST, PGDATABASE….
  const host = url.host !== '' ? url.host : url.searchParams.get('host') ?? '(default host)'
  const name = url.pathname.slice(1)
  return `${host}/${name === '' ? '(default database)' : name}`
}
