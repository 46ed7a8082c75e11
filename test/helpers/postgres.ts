/**
 * The tap-only part of the PostgreSQL test harness: a client whose end is the test's
 * teardown. The throwaway cluster itself (startPostgres, postgresUnavailable) is in
 * postgres-cluster.ts beside it, which the bench uses too: it imports nothing of tap.
 */
import pg from 'pg'
import type { Test } from 'tap'

/** A pg client connected to `url`, ended when the test ends; its errors after an outage are not fatal. */
export async function pgClient (t: Pick<Test, 'teardown'>, url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url })
  client.on('error', () => {})
  t.teardown(async () => await client.end().catch(() => {}))
  await client.connect()
  return client
}
