import pg from 'pg'
import type { EventType } from '../../../schemas/webhook.ts'
import { bytes, utf8 } from './plants.ts'
import { literal } from './statement.ts'
import type { StoredPlant } from '../store.ts'
import { deletedAnnouncement, eventBit } from '../webhooks.ts'

// The statements that change plants, each announcing its changes (events, deliveries) in its
// own transaction, each compare-and-set: a plant changed since it was read is left alone.

// Taken by every transaction that writes events, before its first write, so that seqs are
// drawn in commit order: a cursor never passes a gap a slower transaction fills later.
export const EVENTS_LOCK = '7140531842950291129'
// A statement's writes wait on EVENTS_LOCKED, so that the lock is taken before any row is.
const EVENTS_LOCK_CTE = `events_lock AS (SELECT pg_advisory_xact_lock(${EVENTS_LOCK})::text AS locked)`
const EVENTS_LOCKED = '(SELECT locked FROM events_lock) IS NOT NULL'

/** A new delivery's id, time-ordered (see StoredDelivery); its random part is the last 20 hex digits of gen_random_uuid, PostgreSQL 13's. */
export const NEW_DELIVERY_ID = "'msg_' || lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') || right(replace(gen_random_uuid()::text, '-', ''), 20)"

/**
 * The CTEs that write the events of `source` (plant_id, payload, trace_context, ord) and a
 * delivery of each to every enabled subscription choosing the type within `max` pending; one
 * the events would take past it is disabled instead, one replaying gets them from its replay.
 * Subscriptions are locked in id order, so that two instances' batches cannot deadlock.
 */
function announcing (source: string, type: EventType, max: string): string {
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
    SELECT ${NEW_DELIVERY_ID}, open.id, events.plant_id, events.seq, now() FROM events CROSS JOIN open RETURNING 1
  ), opened AS (
    UPDATE webhooks SET pending = webhooks.pending + counted.n FROM open, counted WHERE webhooks.id = open.id
  ), disabled AS (
    UPDATE webhooks SET disabled_at = now(), missed_since = coalesce(webhooks.missed_since, now()), missed_from = counted.first
    FROM subscribers, counted
    WHERE webhooks.id = subscribers.id AND counted.n > 0 AND subscribers.disabled_at IS NULL AND subscribers.replay_from IS NULL
      AND subscribers.pending + counted.n > ${max}
  )`
}

// How many deliveries a statement queued: its commit's news for the dispatcher.
const QUEUED = '(SELECT count(*) FROM announced)::int AS queued'

/** Creates: $1 ids, $2 names, $3 tags, $4 payloads, $5 the bound of pending deliveries, $6 trace contexts; the ids inserted. */
export const INSERT_PLANTS = `WITH ${EVENTS_LOCK_CTE}, batch AS (
    SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::bytea[], $6::text[]) AS batch (id, name, tag, announcement, trace_context)
    WHERE ${EVENTS_LOCKED}
  ), inserted AS (
    INSERT INTO plants (id, name, tag) SELECT id, name, tag FROM batch ORDER BY id
    ON CONFLICT (id) DO NOTHING
    RETURNING id
  ), created AS (
    SELECT batch.id AS plant_id, batch.announcement AS payload, batch.trace_context, batch.id AS ord FROM inserted JOIN batch USING (id)
  ), ${announcing('created', 'plant.created', '$5')}
  SELECT id, ${QUEUED} FROM inserted`

/** Updates: each plant once, from the state read ($4, $5) to its last ($2, $3), with the event of each update ($6, $7, $9); $8 the bound. */
export const UPDATE_PLANTS = `WITH ${EVENTS_LOCK_CTE}, batch AS (
    SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[]) AS batch (id, name, tag, old_name, old_tag)
    WHERE ${EVENTS_LOCKED}
  ), changed AS (
    UPDATE plants SET name = batch.name, tag = batch.tag FROM batch
    WHERE plants.id = batch.id AND plants.name = batch.old_name AND plants.tag IS NOT DISTINCT FROM batch.old_tag
    RETURNING plants.id
  ), updates AS (
    SELECT plant_id, payload, trace_context, ord FROM unnest($6::bigint[], $7::bytea[], $9::text[]) WITH ORDINALITY AS updates (plant_id, payload, trace_context, ord)
    WHERE plant_id IN (SELECT id FROM changed)
  ), ${announcing('updates', 'plant.updated', '$8')}
  SELECT id, ${QUEUED} FROM changed`

/**
 * Deletes the plants still as read, then announces each deletion, in one transaction (the ids
 * pass in a transaction-local setting); their earlier events are left to the cleanup to erase.
 */
export function deleteScript (plants: StoredPlant[], traceContexts: Array<string | undefined>, maxPending: number): string {
  // Quoted: a bare -9223372036854775808::bigint casts 9223372036854775808 first, out of range.
  const id = (plant: StoredPlant): string => `'${plant.id}'::bigint`
  // A script's statements take no parameters: the values are literals, a tag's NULL typed for the comparison.
  const bytea = (value: Buffer | null): string => value === null ? 'NULL::bytea' : literal(value)
  const read = plants.map((plant) => `(${id(plant)}, ${bytea(utf8(plant.name))}, ${bytea(bytes(plant.tag))})`)
  const origin = (traceContext: string | undefined): string => traceContext === undefined ? 'NULL::text' : pg.escapeLiteral(traceContext)
  const payloads = plants.map((plant, i) => `(${id(plant)}, ${bytea(deletedAnnouncement(plant))}, ${origin(traceContexts[i])}, ${i})`)
  return `SELECT pg_advisory_xact_lock(${EVENTS_LOCK});
    WITH batch (id, name, tag) AS (VALUES ${read.join(', ')}),
    gone AS (
      DELETE FROM plants USING batch
      WHERE plants.id = batch.id AND plants.name = batch.name AND plants.tag IS NOT DISTINCT FROM batch.tag
      RETURNING plants.id)
    SELECT set_config('plant_store.deleted', coalesce(string_agg(id::text, ','), ''), true) AS deleted FROM gone;
  WITH gone AS (
    SELECT plant_id, payload, trace_context, ord FROM (VALUES ${payloads.join(', ')}) AS batch (plant_id, payload, trace_context, ord)
    WHERE plant_id = ANY (string_to_array(current_setting('plant_store.deleted'), ',')::bigint[])),
    ${announcing('gone', 'plant.deleted', String(Math.trunc(maxPending)))},
    erasing AS (INSERT INTO plant_erasures (plant_id, before_seq) SELECT plant_id, seq FROM events)
  SELECT count(*)::int AS announced, ${QUEUED} FROM events`
}
