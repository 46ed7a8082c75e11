import pg from 'pg'
import { CONNECT_TIMEOUT_MS } from './connection.ts'
import { migrate } from './schema.ts'

/** One connection of a store's command (a copy, a restart): long statements, so no statement timeout. */
export interface PostgresSession {
  client: pg.PoolClient
  close: () => Promise<void>
}

/** Connects to the database at `url` and migrates it as the service would (refusing one newer than this code). */
export async function openSession (url: string): Promise<PostgresSession> {
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: 'plant-store command' })
  // A connection lost is reported by the statement it fails; unheard, the event would end the process.
  pool.on('error', () => {})
  try {
    await migrate(pool)
    const client = await pool.connect()
    client.on('error', () => {})
    return {
      client,
      close: async () => {
        client.release()
        await pool.end()
      }
    }
  } catch (err) {
    await pool.end()
    throw err
  }
}
