import type { EventType } from '../../../schemas/webhook.ts'
import { EVENT_BYTES, type ChangeFeed, type ChangeQuery, type ChangeRead } from '../changes.ts'
import type { Query } from './pool.ts'
import { keptPayloadSql } from '../webhooks.ts'

// Seqs are drawn in commit order (see EVENTS_LOCK): a reader that sees an event sees every event before it.

interface Row { seq: string | null, type: EventType | null, plant_id: string | null, payload: Buffer | null, created_at: Date | null, horizon: string, restarted: string, latest: string }

// The horizon, the newest seq and the page, in one snapshot. The page ends at the first
// event that takes the payloads to $3 bytes, their sizes read first (octet_length reads no
// TOASTed content).
const READ = `SELECT event_horizon.pruned_through AS horizon, event_horizon.restarted_through AS restarted, greatest(newest.seq, event_horizon.pruned_through) AS latest, page.*
  FROM event_horizon
  CROSS JOIN (SELECT coalesce(max(seq), 0) AS seq FROM webhook_events) AS newest
  CROSS JOIN LATERAL (SELECT greatest($1::bigint, event_horizon.pruned_through) AS after) AS cursor
  LEFT JOIN LATERAL (SELECT seq, type, plant_id, ${keptPayloadSql('webhook_events')} AS payload, created_at FROM webhook_events
    WHERE seq > cursor.after AND seq <= coalesce((SELECT seq FROM (
      SELECT seq, sum(size) OVER (ORDER BY seq) AS total FROM (
        SELECT seq, coalesce(octet_length(payload), 0) + ${EVENT_BYTES} AS size FROM webhook_events WHERE seq > cursor.after ORDER BY seq LIMIT $2) AS head) AS sums
      WHERE total >= $3 ORDER BY seq LIMIT 1), 9223372036854775807)
    ORDER BY seq LIMIT $2) AS page ON true`

export class PostgresChanges implements ChangeFeed {
  readonly #query: Query

  constructor (query: Query) {
    this.#query = query
  }

  async read ({ after, limit, bytes }: ChangeQuery): Promise<ChangeRead> {
    const { rows } = await this.#query<Row>(READ, [after ?? 0, limit, bytes])
    const { horizon, restarted, latest } = rows[0]
    const changes = rows.filter((row) => row.seq !== null).map((row) => ({
      seq: Number(row.seq), type: row.type!, plantId: BigInt(row.plant_id!), payload: row.payload, at: row.created_at!
    }))
    return { changes, horizon: Number(horizon), restarted: Number(restarted), latest: Number(latest) }
  }

  async latest (): Promise<number> {
    const { rows } = await this.#query<{ seq: string }>('SELECT coalesce(max(seq), 0) AS seq FROM webhook_events')
    return Number(rows[0].seq)
  }
}
