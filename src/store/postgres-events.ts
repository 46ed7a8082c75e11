import type { EventType } from '../../schemas/webhook.ts'
import { literal } from './postgres-statement.ts'
import { eventBit } from './webhooks.ts'

// The events of batches of creates (postgres-plants.ts), updates (postgres-updates.ts) and
// deletes (postgres-deletes.ts), each written in the transaction of its change, after
// EVENTS_LOCK (see postgres-changes.ts).
// Each writes a plant only while it is still the one read (compare and set), so two
// instances cannot both act on one state: the one that finds it changed reads it again.

/**
 * The CTEs that announce the events of `source` (columns plant_id, payload, trace_context, ord): each
 * payload once, in ord order, and a delivery of each to every enabled subscription choosing
 * the type that stays within `max` pending; one the events would take past it is disabled
 * instead, their first its first missed. A subscription whose replay is under way gets
 * them from the replay, in order, within its bound: it is neither announced to nor disabled. The subscriptions are locked (FOR NO KEY UPDATE: a
 * delete, and another statement counting, wait for it) in id order, so that two instances'
 * batches cannot deadlock; a subscription deleted meanwhile then finds the deliveries (see
 * unsubscribe).
 */
export function announcing (source: string, type: EventType, max: string): string {
  return `subscribers AS (
    SELECT id, pending, disabled_at, replay_from FROM webhooks WHERE events & ${eventBit(type)} <> 0 AND EXISTS (SELECT 1 FROM ${source}) ORDER BY id FOR NO KEY UPDATE
  ), events AS (
    INSERT INTO webhook_events (plant_id, type, payload, trace_context)
    SELECT plant_id, '${type}', payload, trace_context FROM ${source} ORDER BY ord RETURNING seq, plant_id
  ), counted AS (
    SELECT count(*) AS n, min(seq) AS first FROM events
  ), open AS (
    SELECT subscribers.id FROM subscribers, counted
    WHERE counted.n > 0 AND subscribers.disabled_at IS NULL AND subscribers.replay_from IS NULL AND subscribers.pending + counted.n <= ${max}
  ), announced AS (
    INSERT INTO webhook_deliveries (id, webhook_id, plant_id, event_seq, next_attempt_at)
    SELECT ${NEW_DELIVERY_ID}, open.id, events.plant_id, events.seq, now() FROM events CROSS JOIN open
  ), opened AS (
    UPDATE webhooks SET pending = webhooks.pending + counted.n FROM open, counted WHERE webhooks.id = open.id
  ), disabled AS (
    UPDATE webhooks SET disabled_at = now(), missed_since = coalesce(webhooks.missed_since, now()), missed_from = counted.first
    FROM subscribers, counted
    WHERE webhooks.id = subscribers.id AND counted.n > 0 AND subscribers.disabled_at IS NULL AND subscribers.replay_from IS NULL
      AND subscribers.pending + counted.n > ${max}
  )`
}

/** A new delivery's id, time-ordered (see StoredDelivery); its random part is the last 20 hex digits of gen_random_uuid, PostgreSQL 13's. */
export const NEW_DELIVERY_ID = "'msg_' || lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') || right(replace(gen_random_uuid()::text, '-', ''), 20)"

/** The answer of a write whose plant changed since it was read: read it and decide again. */
export const AGAIN = Symbol('again')

/** A name or tag as the bytea columns keep it: its UTF-8 bytes, byte for byte. */
export function utf8 (text: string): Buffer {
  return Buffer.from(text, 'utf8')
}

export function bytes (text: string | undefined): Buffer | null {
  return text === undefined ? null : utf8(text)
}

/** A bytea literal for a script, whose statements take no parameters. */
export function byteaLiteral (value: Buffer | null): string {
  return value === null ? 'NULL::bytea' : literal(value)
}
