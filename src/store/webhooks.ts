import { DEFAULT_MAX_PENDING, EVENT_TYPES, type DeliveryStatus, type EventType } from '../../schemas/webhook.ts'
import type { StoredPlant } from '../../schemas/index.ts'
import type { KeyClaim, KeyOutcome, KeyRequest, SubscribeOutcome } from './idempotency-keys.ts'

// The store's bound until the app sets WEBHOOK_MAX_PENDING's value (limitPending).
export { DEFAULT_MAX_PENDING }

// A delivery is written in the same transaction as its plant: every committed plant is
// announced, nothing uncommitted ever is.

export interface StoredSubscription {
  id: string
  url: string
  /** The Standard Webhooks key, `whsec_…`: needed to sign, so kept as it is. */
  secret: string
  /** The events announced to it; plant.created alone when left out. */
  events?: EventType[]
  createdAt: Date
  /** Set once its pending deliveries reached the bound: it gets no new ones until enabled. */
  disabledAt?: Date
  /** While disabled, or its replay is under way: when the first event it has not been given was created. */
  missedSince?: Date
  /** Whether enable left missed events to queue (see replay). */
  replaying?: boolean
  /** Its pending deliveries, as counted by the store. */
  pending?: number
}

export interface StoredDelivery {
  /** Ascending in creation order within a store: the cursor of the delivery log. */
  seq: number
  /** `msg_` + 12 hex digits of ms + 20 of random: time first, so new ids append to the index. */
  id: string
  webhookId: string
  plantId: bigint
  event: EventType
  status: DeliveryStatus
  attempts: number
  lastStatusCode?: number
  lastError?: string
  nextAttemptAt?: Date
  createdAt: Date
  deliveredAt?: Date
}

/** A delivery due now, leased to this instance until the lease expires. */
export interface DueDelivery {
  id: string
  /** The exact body to send: the NewPlant as JSON, its id an exact integer. */
  payload: Buffer
  /** Attempts made before this one. */
  attempts: number
  /** Proves the lease when the attempt is recorded: a lease another instance took over no longer matches. */
  lease: string
  /** The W3C traceparent its event kept: the request that made the change, traced. */
  traceContext?: string
}

/** A delivery as a claim returns it; a trace context only when its event kept one. */
export function dueDelivery (id: string, payload: Buffer, attempts: number, lease: string, traceContext: string | null): DueDelivery {
  return traceContext === null ? { id, payload, attempts, lease } : { id, payload, attempts, lease, traceContext }
}

/** What an attempt came to: delivered, or not, and then either retried after `retryInMs` or failed for good. */
export interface AttemptRecord {
  delivered: boolean
  statusCode?: number
  error?: string
  /** When not delivered: the wait before the next attempt, by the store's clock; undefined when this was the last attempt. */
  retryInMs?: number
}

export interface DeliveryPage {
  limit: number
  /** Only deliveries with a smaller seq. */
  before?: number
}

/**
 * restarted: the delivery is pending again, due now; pending: it already was; erased: its
 * plant was deleted, and its payload with it; absent: no such delivery.
 */
export type RestartOutcome = 'restarted' | 'pending' | 'erased' | 'absent'

/** The lastError of a delivery failed because its plant was deleted. */
export const PLANT_DELETED = 'plant deleted'
/** The most rows one pruning or replaying statement touches: no statement grows with the data. */
export const CHUNK_ROWS = 1000

export interface WebhookStore {
  /** Adds a subscription unless `max` exist already; with a claim, only while it holds its key, which it completes. */
  subscribe: (subscription: StoredSubscription, max: number, claim?: KeyClaim) => Promise<SubscribeOutcome>
  /** Claims a subscribe's Idempotency-Key (see idempotency-keys.ts), or says why it cannot. */
  claimKey: (request: KeyRequest) => Promise<KeyOutcome>
  /** Gives up a claimed key whose request failed: a retry runs it again. */
  releaseKey: (claim: KeyClaim) => Promise<void>
  /** Deletes up to `limit` keys older than KEY_TTL_MS, by the store's clock; returns how many. */
  pruneKeys: (limit: number) => Promise<number>
  /** Every subscription, oldest first. */
  subscriptions: () => Promise<StoredSubscription[]>
  /** Deletes a subscription, at once for every reader; false when there was none. Its deliveries are left to `sweep`. */
  unsubscribe: (id: string) => Promise<boolean>
  /** Deletes up to `limit` deliveries whose subscription is gone; returns how many. */
  sweep: (limit: number) => Promise<number>
  /** A subscription's deliveries, newest first. */
  deliveries: (webhookId: string, page: DeliveryPage) => Promise<StoredDelivery[]>
  /** Starts a delivered or failed delivery over: pending, no attempts, due now. */
  restart: (webhookId: string, deliveryId: string) => Promise<RestartOutcome>
  /**
   * Leases up to `limit` due deliveries, oldest first, for `leaseMs`; live leases elsewhere are skipped.
   * One whose payload is gone (its plant deleted meanwhile) is failed instead, not returned.
   */
  claim: (webhookId: string, limit: number, leaseMs: number) => Promise<DueDelivery[]>
  /** Records an attempt of a leased delivery and releases the lease; ignored once the lease was lost. */
  record: (delivery: DueDelivery, attempt: AttemptRecord) => Promise<void>
  /** Gives up the leases of deliveries claimed but not attempted: due again at once, for any instance. */
  release: (deliveries: DueDelivery[]) => Promise<void>
  /** How many deliveries are pending, for every subscription. */
  pending: () => Promise<number>
  /** Deletes up to `limit` delivered and failed deliveries settled before `settledBefore`; returns how many. */
  prune: (settledBefore: Date, limit: number) => Promise<number>
  /** Sets the bound of a subscription's pending deliveries: an announce past it disables the subscription instead. */
  limitPending: (max: number) => void
  /** Enables a disabled subscription, its missed events left to replay; false when there was none. */
  enable: (id: string) => Promise<boolean>
  /**
   * Queues the next of the events an enabled subscription missed, oldest first, `limit`
   * events looked at within its bound, those already queued for it skipped; returns how
   * many it looked at (fewer than `limit`: caught up, or at the bound). Until it has caught
   * up with the newest event, new events are left to it, so a plant's go in order.
   */
  replay: (id: string, limit: number) => Promise<number>
  /**
   * Erases up to `limit` events of a deleted plant (those before its deletion; they read
   * as erased already) and fails their deliveries still pending; returns whether more
   * deleted plants' events may wait.
   */
  erase: (limit: number) => Promise<boolean>
  /**
   * Looks at the `limit` events after seq `after` and deletes those created before
   * `createdBefore` that no delivery refers to; returns the seq to go on after, or
   * undefined once past the last event so old.
   */
  pruneEvents: (createdBefore: Date, after: number, limit: number) => Promise<number | undefined>
}

/** The body of a plant.created: the upstream NewPlant, the id written as an exact integer, no type (as before events were chosen). */
export function announcement ({ id, name, tag }: StoredPlant): Buffer {
  return Buffer.from(`{"id":${id},${plantFields({ name, tag })}}`)
}

/** The body of a plant.updated: its type (signed with it), the id, the plant before and after. */
export function updatedAnnouncement (previous: StoredPlant, current: StoredPlant): Buffer {
  return Buffer.from(`{"type":"plant.updated","id":${current.id},"old":{${plantFields(previous)}},"new":{${plantFields(current)}}}`)
}

/** The body of a plant.deleted: its type (signed with it), the id, the name and tag it had. */
export function deletedAnnouncement ({ id, name, tag }: StoredPlant): Buffer {
  return Buffer.from(`{"type":"plant.deleted","id":${id},${plantFields({ name, tag })}}`)
}

function plantFields ({ name, tag }: { name: string, tag?: string }): string {
  return `"name":${JSON.stringify(name)}${tag === undefined ? '' : `,"tag":${JSON.stringify(tag)}`}`
}

// A subscription's events are kept as a bit set: an event goes to those whose set has its bit.

/** The bit of an event type. */
export function eventBit (type: EventType): number {
  return 1 << EVENT_TYPES.indexOf(type)
}

export function eventMask (types: EventType[]): number {
  return types.reduce((mask, type) => mask | eventBit(type), 0)
}

export function eventTypes (mask: number): EventType[] {
  return EVENT_TYPES.filter((type) => (mask & eventBit(type)) !== 0)
}

/**
 * SQL (both engines): whether the event in `alias` (its seq, plant_id and payload) is
 * erased: its payload gone, or its plant deleted after it and the erasure still to come.
 */
export function erasedSql (alias: string): string {
  return `(${alias}.payload IS NULL OR EXISTS (SELECT 1 FROM plant_erasures
    WHERE plant_erasures.plant_id = ${alias}.plant_id AND plant_erasures.before_seq > ${alias}.seq))`
}

/** SQL (both engines): the payload of the event in `alias`, NULL once erased (see erasedSql). */
export function keptPayloadSql (alias: string): string {
  return `CASE WHEN ${erasedSql(alias)} THEN NULL ELSE ${alias}.payload END`
}

/** SQL (both engines): the bit of the event type in `column`. */
export function eventBitSql (column: string): string {
  return `CASE ${column} ${EVENT_TYPES.map((type) => `WHEN '${type}' THEN ${eventBit(type)}`).join(' ')} ELSE 0 END`
}
