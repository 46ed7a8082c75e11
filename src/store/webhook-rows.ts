import type { DeliveryStatus, EventType } from '../../schemas/webhook.ts'
import { eventTypes, type StoredDelivery, type StoredSubscription } from './webhooks.ts'

// The webhook tables' rows as both engines read them: the same columns, each driver with
// its own types (SQLite: integers as bigint, times as epoch milliseconds; node-postgres:
// int8 as a string, timestamptz as a Date).

type Integer = number | bigint | string
type Time = Date | bigint

export const SUBSCRIPTION_COLUMNS = 'id, url, secret, events, created_at, pending, disabled_at, missed_since, replay_from IS NOT NULL AS replaying'
// An event is kept while a delivery refers to it (see pruneEvents).
export const DELIVERY_COLUMNS = `seq, id, webhook_id, plant_id, status, attempts, last_status_code, last_error, next_attempt_at, created_at, delivered_at,
  (SELECT type FROM webhook_events WHERE webhook_events.seq = webhook_deliveries.event_seq) AS type`

export interface SubscriptionRow {
  id: string
  url: string
  secret: string
  events: Integer
  created_at: Time
  pending: Integer
  disabled_at: Time | null
  missed_since: Time | null
  replaying: boolean | Integer
}

export interface DeliveryRow {
  seq: Integer
  id: string
  webhook_id: string
  plant_id: bigint | string
  status: DeliveryStatus
  attempts: Integer
  last_status_code: Integer | null
  last_error: string | null
  next_attempt_at: Time | null
  created_at: Time
  delivered_at: Time | null
  type: EventType | null
}

export function toSubscription (row: SubscriptionRow): StoredSubscription {
  return {
    id: row.id,
    url: row.url,
    secret: row.secret,
    events: eventTypes(Number(row.events)),
    createdAt: time(row.created_at),
    ...row.disabled_at === null ? {} : { disabledAt: time(row.disabled_at) },
    ...row.missed_since === null ? {} : { missedSince: time(row.missed_since) },
    replaying: Boolean(Number(row.replaying)),
    pending: Number(row.pending)
  }
}

/** The delivery a row holds; a column that is NULL is a field left out. */
export function toDelivery (row: DeliveryRow): StoredDelivery {
  return {
    seq: Number(row.seq),
    id: row.id,
    webhookId: row.webhook_id,
    plantId: BigInt(row.plant_id),
    event: row.type ?? 'plant.created',
    status: row.status,
    attempts: Number(row.attempts),
    ...row.last_status_code === null ? {} : { lastStatusCode: Number(row.last_status_code) },
    ...row.last_error === null ? {} : { lastError: row.last_error },
    ...row.next_attempt_at === null ? {} : { nextAttemptAt: time(row.next_attempt_at) },
    createdAt: time(row.created_at),
    ...row.delivered_at === null ? {} : { deliveredAt: time(row.delivered_at) }
  }
}

function time (value: Time): Date {
  return value instanceof Date ? value : new Date(Number(value))
}
