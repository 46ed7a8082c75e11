import { PostgresStore } from './postgres/store.ts'
import { SqliteStore } from './sqlite/store.ts'
import type { PlantStore, StoreContext } from './store.ts'

/** Where plants are kept, as DATABASE_URL names it; `memory` is a SQLite database that lives as long as the process. */
export type DatabaseConfig =
  | { engine: 'memory' }
  | { engine: 'sqlite', path: string }
  | { engine: 'postgres', url: string, poolSize: number, preparedStatements?: boolean }

/** Opens the store the configuration names; the routes never learn which engine it is. */
export async function openStore (database: DatabaseConfig, context: StoreContext): Promise<PlantStore> {
  switch (database.engine) {
    case 'memory': return new SqliteStore(':memory:', context)
    case 'sqlite':
      try {
        return new SqliteStore(database.path, context)
      } catch (err) {
        // SQLite's own words name no file ("unable to open database file", "disk I/O
        // error" for a device): the refusal to start says which.
        throw new Error(`DATABASE_URL sqlite:${database.path} cannot be used: ${(err as Error).message}`, { cause: err })
      }
    case 'postgres': return await PostgresStore.open(database.url, database.poolSize, context, database.preparedStatements)
  }
}
