import { MemoryStore } from './memory.js'
import type { PlantStore } from './store.js'

/** Opens the store DATABASE_URL names; the config has already checked the scheme. */
export async function openStore (databaseUrl: string): Promise<PlantStore> {
  if (databaseUrl === 'memory:') return new MemoryStore()
  throw new Error(`DATABASE_URL: no store for ${databaseUrl}`)
}
