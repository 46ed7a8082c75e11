import type Database from 'better-sqlite3'
import type { EventType } from '../../../schemas/webhook.ts'
import { EVENT_BYTES, type ChangeFeed, type ChangeQuery, type ChangeRead } from '../changes.ts'
import type { Read } from './webhooks.ts'
import { keptPayloadSql } from '../webhooks.ts'

interface Row { seq: bigint, type: EventType, plant_id: bigint, payload: Buffer | null, created_at: bigint }
interface Page { after: number, limit: number, bytes: number }

// One writer commits at a time, so seq order is commit order; a read waits until what
// it saw is on disk, so the feed never shows an event a crash could still take back.

export class SqliteChanges implements ChangeFeed {
  readonly #read: Read
  readonly #statements

  constructor (db: Database.Database, read: Read) {
    this.#read = read
    this.#statements = {
      // Up to the first event that takes the payloads to `bytes`, their sizes read first:
      // length() of a blob reads no content.
      page: db.prepare<[Page], Row>(`SELECT seq, type, plant_id, ${keptPayloadSql('webhook_events')} AS payload, created_at FROM webhook_events
        WHERE seq > @after AND seq <= coalesce((SELECT seq FROM (
          SELECT seq, sum(size) OVER (ORDER BY seq) AS total FROM (
            SELECT seq, coalesce(length(payload), 0) + ${EVENT_BYTES} AS size FROM webhook_events WHERE seq > @after ORDER BY seq LIMIT +@limit))
          WHERE total >= @bytes ORDER BY seq LIMIT 1), 9223372036854775807)
        ORDER BY seq LIMIT +@limit`),
      horizon: db.prepare<[], { pruned_through: bigint, restarted_through: bigint }>('SELECT pruned_through, restarted_through FROM event_horizon'),
      // AUTOINCREMENT keeps the largest seq ever issued, pruned or not.
      latest: db.prepare<[], bigint | null>("SELECT seq FROM sqlite_sequence WHERE name = 'webhook_events'").pluck()
    }
  }

  async read ({ after, limit, bytes }: ChangeQuery): Promise<ChangeRead> {
    return await this.#read(() => {
      const marks = this.#statements.horizon.get()!
      const horizon = Number(marks.pruned_through)
      const rows = this.#statements.page.all({ after: Math.max(after ?? 0, horizon), limit, bytes })
      const changes = rows.map(({ seq, type, plant_id: plantId, payload, created_at: at }) =>
        ({ seq: Number(seq), type, plantId, payload, at: new Date(Number(at)) }))
      return { changes, horizon, restarted: Number(marks.restarted_through), latest: this.#latest() }
    })
  }

  async latest (): Promise<number> {
    return await this.#read(() => this.#latest())
  }

  #latest (): number {
    return Number(this.#statements.latest.get() ?? 0)
  }
}
