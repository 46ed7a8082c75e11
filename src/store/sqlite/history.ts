import type Database from 'better-sqlite3'
import { restartedThrough } from '../transfer.ts'

// The change feed's history in a SQLite file: its newest seq, and the restart that puts
// every cursor of an earlier history behind the horizon.

/** The newest seq the file's feed issued, pruned or restarted past. */
export function latestSeq (db: Database.Database): number {
  const row = db.prepare<[], { latest: bigint | number }>(`SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'webhook_events'), 0),
    (SELECT pruned_through FROM event_horizon)) AS latest`).get()!
  return Number(row.latest)
}

/**
 * Restarts the history past `latest`: the next event's seq follows restartedThrough(latest),
 * and every cursor before it is answered 410 as from an earlier history. The events kept
 * (those the outbox still needs) stay behind the horizon. Runs inside the caller's transaction.
 */
export function restartHistory (db: Database.Database, latest: number): number {
  const through = restartedThrough(latest)
  db.prepare('UPDATE event_horizon SET pruned_through = ?, restarted_through = ?').run(through, through)
  // AUTOINCREMENT draws the next seq after the larger of this and the largest kept.
  if (db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'webhook_events'").run(through).changes === 0) {
    db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('webhook_events', ?)").run(through)
  }
  return through
}
