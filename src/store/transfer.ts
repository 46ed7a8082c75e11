import type { StoredPlant } from './store.ts'

// A store's whole content, as one engine reads it out (a snapshot) and another writes it
// in (a load): plants, subscriptions, and the part of the outbox still owed to them. The
// change feed's history is not carried: it restarts on the destination (restartHistory).

/** Rows a snapshot reads, and a load writes, per statement: memory stays bounded whatever the store holds. */
export const TRANSFER_CHUNK = 10_000

/**
 * How far past the latest seq of the history it replaces a restarted history begins: a
 * cursor of that history stays behind the new one however many events the replaced store
 * took after the snapshot (a move whose source went on writing, a restore whose replaced
 * database is gone). Seqs are JSON numbers: 2^53 leaves room for about 9,000 restarts.
 */
const HISTORY_GAP = 1_000_000_000_000

/** The seq after which a history restarted past `latest` begins. */
export function restartedThrough (latest: number): number {
  const through = latest + HISTORY_GAP
  if (!Number.isSafeInteger(through)) throw new Error(`the change feed's seqs would pass 2^53 (the latest is ${latest}): its history cannot restart again`)
  return through
}

/** A subscription with everything either engine keeps of it; times in milliseconds since the epoch, seqs the source's. */
export interface SubscriptionRecord {
  id: string
  url: string
  secret: string
  /** The bit set of the events it chose (see eventMask). */
  events: number
  createdAt: number
  pending: number
  disabledAt: number | null
  missedSince: number | null
  /** While disabled: the first event it missed. */
  missedFrom: number | null
  /** While replaying: the events still to queue. */
  replayFrom: number | null
  replayTo: number | null
}

/** An event the outbox still needs: a pending delivery's, or one a disabled or replaying subscription is owed. */
export interface EventRecord {
  seq: number
  plantId: bigint
  type: string
  /** Null once its plant was deleted. */
  payload: Buffer | null
  createdAt: number
  traceContext: string | null
}

/** A pending delivery, under the id its receiver de-duplicates by. */
export interface DeliveryRecord {
  id: string
  webhookId: string
  plantId: bigint
  eventSeq: number
  attempts: number
  lastStatusCode: number | null
  lastError: string | null
  nextAttemptAt: number | null
  createdAt: number
}

/** What a snapshot holds, counted in it. */
export interface SnapshotSummary {
  plants: number
  subscriptions: number
  /** Pending deliveries of subscriptions that exist. */
  pending: number
  /** The newest seq the store issued (or pruned, or restarted past). */
  latest: number
}

/** One consistent snapshot of a store, read in chunks; nothing in it changes while it is open. */
export interface StoreSnapshot {
  readonly summary: SnapshotSummary
  /** Every plant, ascending by id. */
  plants: () => AsyncIterable<StoredPlant[]>
  /** Every subscription, oldest first. */
  subscriptions: () => Promise<SubscriptionRecord[]>
  /** The events the outbox still needs, ascending by seq. */
  events: () => AsyncIterable<EventRecord[]>
  /** The pending deliveries, oldest first. */
  deliveries: () => AsyncIterable<DeliveryRecord[]>
  close: () => Promise<void>
}

/** What a destination held when its load began. */
export interface Held {
  plants: number
  subscriptions: number
  latest: number
}

/** Writes into a store in one transaction: all of it is there once committed, none of it if not. */
export interface StoreLoad {
  readonly held: Held
  /** Deletes what the destination holds: plants, subscriptions, the outbox and its events, the subscribes' idempotency keys. */
  clear: () => Promise<void>
  plants: (chunks: AsyncIterable<StoredPlant[]>) => Promise<void>
  subscriptions: (subscriptions: SubscriptionRecord[]) => Promise<void>
  events: (chunks: AsyncIterable<EventRecord[]>) => Promise<void>
  deliveries: (chunks: AsyncIterable<DeliveryRecord[]>) => Promise<void>
  /** Restarts the change feed's history past `latest` (see restartedThrough); returns where. */
  restartHistory: (latest: number) => Promise<number>
  /** The plants as this transaction wrote them, ascending by id: the copy's check. */
  written: () => AsyncIterable<StoredPlant[]>
  commit: () => Promise<void>
  /** Rolls back unless committed, and lets go of the database. */
  close: () => Promise<void>
}

/** A destination that holds plants or subscriptions, which a copy would otherwise mix with its own. */
export class DestinationNotEmpty extends Error {
  constructor ({ plants, subscriptions }: Held) {
    super(`the destination already holds ${plants} plants and ${subscriptions} subscriptions: name an empty store, or pass --replace to delete them`)
    this.name = 'DestinationNotEmpty'
  }
}
