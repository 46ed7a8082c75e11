import type { EventType } from '../../schemas/webhook.ts'

// The change feed reads the outbox's events: the same records webhooks deliver, written in
// the transaction of the change each announces.

/** One event as stored: `payload` is the exact body its webhooks get; null once its plant was deleted (erased). */
export interface StoredChange {
  seq: number
  type: EventType
  plantId: bigint
  at: Date
  payload: Buffer | null
}

/** What a read counts for an event besides its payload's bytes (its other columns). */
export const EVENT_BYTES = 64

export interface ChangeQuery {
  /** Only events with a larger seq; from the oldest kept when left out. */
  after?: number
  limit: number
  /**
   * Stops once the events' payloads reach about this many bytes (at least one event): a
   * read's work is bounded in bytes, whatever the events hold.
   */
  bytes: number
}

export interface ChangeRead {
  /** Up to `limit` events after the cursor (or after `horizon`), ascending by seq: the order they committed in. */
  changes: StoredChange[]
  /** The last seq pruned: a cursor before it has lost events. */
  horizon: number
  /** The last seq of an earlier history (the store was moved or restored; 0 if never): a cursor before it is from that history. */
  restarted: number
  /** The newest seq committed (or pruned): a cursor past it was never issued by this store. */
  latest: number
}

export interface ChangeFeed {
  /** Reads the events after the cursor, with the horizon and latest of the same snapshot. */
  read: (query: ChangeQuery) => Promise<ChangeRead>
  /** The newest seq committed: polled while readers wait, for the changes of other instances. */
  latest: () => Promise<number>
}
