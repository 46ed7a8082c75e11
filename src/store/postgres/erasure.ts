import { EVENTS_LOCK } from './writes.ts'
import type { Script } from './pool.ts'
import { PLANT_DELETED } from '../webhooks.ts'

// A deleted plant's events before its deletion, a chunk at a time (FOR UPDATE SKIP LOCKED:
// instances erasing at once take different plants): each payload erased, its deliveries
// still pending failed. After EVENTS_LOCK, as writes of events take it before they lock
// subscriptions, so that the counts updated here cannot deadlock with them.
function eraseScript (limit: number): string {
  return `SELECT pg_advisory_xact_lock(${EVENTS_LOCK});
  WITH erasure AS (
    SELECT plant_id, before_seq, erased_through FROM plant_erasures ORDER BY plant_id, before_seq LIMIT 1 FOR UPDATE SKIP LOCKED),
  chunk AS (
    SELECT events.seq FROM webhook_events AS events, erasure
    WHERE events.plant_id = erasure.plant_id AND events.seq > erasure.erased_through AND events.seq < erasure.before_seq
    ORDER BY events.seq LIMIT ${limit}),
  erased AS (UPDATE webhook_events SET payload = NULL WHERE seq IN (SELECT seq FROM chunk) AND payload IS NOT NULL RETURNING seq),
  failed AS (
    UPDATE webhook_deliveries SET status = 'failed', last_error = '${PLANT_DELETED}', next_attempt_at = NULL, settled_at = now(),
      lease = NULL, lease_until = NULL
    WHERE event_seq IN (SELECT seq FROM erased) AND status = 'pending' RETURNING webhook_id),
  counted AS (
    UPDATE webhooks SET pending = webhooks.pending - failed_per.n
    FROM (SELECT webhook_id, count(*) AS n FROM failed GROUP BY webhook_id) AS failed_per WHERE webhooks.id = failed_per.webhook_id),
  examined AS (SELECT count(*) AS n, max(seq) AS last FROM chunk),
  advanced AS (
    UPDATE plant_erasures SET erased_through = examined.last FROM erasure, examined
    WHERE plant_erasures.plant_id = erasure.plant_id AND plant_erasures.before_seq = erasure.before_seq AND examined.n = ${limit}),
  done AS (
    DELETE FROM plant_erasures USING erasure, examined
    WHERE plant_erasures.plant_id = erasure.plant_id AND plant_erasures.before_seq = erasure.before_seq AND examined.n < ${limit})
  SELECT count(*)::int AS erasures FROM erasure`
}

/** Erases a chunk of a deleted plant's events (see eraseScript); false when no deleted plant's events were left to erase. */
export async function eraseChunk (script: Script, limit: number): Promise<boolean> {
  const [, { rows: [{ erasures }] }] = await script(eraseScript(Math.trunc(limit)))
  return (erasures as number) > 0
}
