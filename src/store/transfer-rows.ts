import type { DeliveryRecord, EventRecord, SubscriptionRecord } from './transfer.ts'
import type { DeliveryRow as ListedDelivery, SubscriptionRow as ListedSubscription } from './webhook-rows.ts'
import { keptPayloadSql } from './webhooks.ts'

// The rows a snapshot reads, as both engines return them (see webhook-rows.ts: the same
// columns the API reads, and those it does not), and the statements' shared parts.

type Integer = number | bigint | string
type Time = Date | bigint

export const SUBSCRIPTION_COLUMNS = 'id, url, secret, events, created_at, pending, disabled_at, missed_since, missed_from, replay_from, replay_to'
// A deleted plant's events go as erased, whether or not the cleanup has erased their data yet.
export const EVENT_COLUMNS = `seq, plant_id, type, ${keptPayloadSql('webhook_events')} AS payload, created_at, trace_context`
export const DELIVERY_COLUMNS = 'seq, id, webhook_id, plant_id, event_seq, attempts, last_status_code, last_error, next_attempt_at, created_at'

/** The pending deliveries of subscriptions that exist: those a copy moves. */
export const PENDING = "status = 'pending' AND webhook_id IN (SELECT id FROM webhooks)"
/**
 * The events the outbox still needs: a pending delivery's, or at or after the oldest event a
 * disabled or replaying subscription is owed.
 */
export const OWED_EVENT = `(seq >= coalesce((SELECT min(coalesce(missed_from, replay_from)) FROM webhooks), 9223372036854775807)
  OR EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_seq = webhook_events.seq AND ${PENDING}))`

export interface SubscriptionRow extends Omit<ListedSubscription, 'replaying'> {
  missed_from: Integer | null
  replay_from: Integer | null
  replay_to: Integer | null
}

export interface EventRow {
  seq: Integer
  plant_id: bigint | string
  type: string
  payload: Buffer | null
  created_at: Time
  trace_context: string | null
}

export interface DeliveryRow extends Omit<ListedDelivery, 'status' | 'delivered_at' | 'type'> {
  event_seq: Integer
}

const number = (value: Integer | null): number | null => value === null ? null : Number(value)
const ms = (value: Time | null): number | null => value === null ? null : value instanceof Date ? value.getTime() : Number(value)

export function toSubscriptionRecord (row: SubscriptionRow): SubscriptionRecord {
  return {
    id: row.id,
    url: row.url,
    secret: row.secret,
    events: Number(row.events),
    createdAt: ms(row.created_at)!,
    pending: Number(row.pending),
    disabledAt: ms(row.disabled_at),
    missedSince: ms(row.missed_since),
    missedFrom: number(row.missed_from),
    replayFrom: number(row.replay_from),
    replayTo: number(row.replay_to)
  }
}

export function toEventRecord (row: EventRow): EventRecord {
  return {
    seq: Number(row.seq),
    plantId: BigInt(row.plant_id),
    type: row.type,
    payload: row.payload,
    createdAt: ms(row.created_at)!,
    traceContext: row.trace_context
  }
}

export function toDeliveryRecord (row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    plantId: BigInt(row.plant_id),
    eventSeq: Number(row.event_seq),
    attempts: Number(row.attempts),
    lastStatusCode: number(row.last_status_code),
    lastError: row.last_error,
    nextAttemptAt: ms(row.next_attempt_at),
    createdAt: ms(row.created_at)!
  }
}
