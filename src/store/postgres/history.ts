import type pg from 'pg'
import { EVENTS_LOCK } from './writes.ts'
import { restartedThrough } from '../transfer.ts'

// The change feed's history in PostgreSQL: its newest seq, and the restart that puts every
// cursor of an earlier history behind the horizon. Both run in the caller's transaction.

/** Takes, to the end of the transaction, the lock every transaction writing events holds (see writes.ts). */
export async function lockEvents (client: pg.ClientBase): Promise<void> {
  await client.query(`SELECT pg_advisory_xact_lock(${EVENTS_LOCK})`)
}

/** The newest seq issued, pruned or restarted past. */
export async function latestSeq (client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ latest: string }>(`SELECT greatest(
      coalesce((SELECT max(seq) FROM webhook_events), 0),
      coalesce(pg_sequence_last_value(pg_get_serial_sequence('webhook_events', 'seq')), 0),
      (SELECT pruned_through FROM event_horizon)) AS latest`)
  return Number(rows[0].latest)
}

/**
 * Restarts the history past `latest`: the next event's seq follows restartedThrough(latest),
 * and every cursor before it is answered 410 as from an earlier history. The events kept
 * (those the outbox still needs) stay behind the horizon.
 */
export async function restartHistory (client: pg.ClientBase, latest: number): Promise<number> {
  const through = restartedThrough(latest)
  await client.query('UPDATE event_horizon SET pruned_through = $1, restarted_through = $1', [through])
  // DDL, so it rolls back with the transaction (setval would not).
  await client.query(`ALTER TABLE webhook_events ALTER COLUMN seq RESTART WITH ${through + 1}`)
  return through
}
