import { EVENTS_LOCK, NEW_DELIVERY_ID } from './writes.ts'
import type { Query, Script } from './pool.ts'
import { literal } from './statement.ts'
import { erasedSql, eventBitSql } from '../webhooks.ts'

/**
 * A chunk of a replay: the next `limit` events from replay_from, within the subscription's
 * bound, queued if chosen, kept, and not queued for it already (live, before an earlier
 * disable). The subscription's row is locked first: instances replaying at once take turns.
 * Only a chunk run after EVENTS_LOCK (`finish`) may end the replay when it reaches the
 * newest event: no event can commit between its read and the end, which hands new events
 * to live announcing.
 */
function replayStatement (id: string, limit: string, max: string, finish: boolean): string {
  const caughtUp = finish ? 'summary.examined < state.room' : 'false'
  return `WITH state AS (
    SELECT id, events, replay_from, least(${limit}::bigint, ${max}::bigint - pending) AS room FROM webhooks
    WHERE id = ${id} AND disabled_at IS NULL AND replay_from IS NOT NULL FOR NO KEY UPDATE),
  chunk AS (
    SELECT events.seq, events.plant_id, events.type, events.payload FROM webhook_events AS events, state
    WHERE events.seq >= state.replay_from ORDER BY events.seq LIMIT (SELECT greatest(room, 0) FROM state)),
  queued AS (
    INSERT INTO webhook_deliveries (id, webhook_id, plant_id, event_seq, next_attempt_at)
    SELECT ${NEW_DELIVERY_ID}, ${id}, chunk.plant_id, chunk.seq, now() FROM chunk, state
    WHERE NOT ${erasedSql('chunk')} AND state.events & (${eventBitSql('chunk.type')}) <> 0
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries AS done WHERE done.event_seq = chunk.seq AND done.webhook_id = ${id})
    ORDER BY chunk.seq RETURNING event_seq),
  summary AS (SELECT (SELECT count(*) FROM queued) AS n, (SELECT count(*) FROM chunk) AS examined, (SELECT max(seq) FROM chunk) AS last)
  UPDATE webhooks SET pending = webhooks.pending + summary.n,
    replay_from = CASE WHEN ${caughtUp} THEN NULL ELSE coalesce(summary.last + 1, webhooks.replay_from) END,
    missed_since = CASE WHEN ${caughtUp} THEN NULL ELSE webhooks.missed_since END
  FROM state, summary WHERE webhooks.id = state.id AND state.room > 0
  RETURNING summary.n::int AS queued, summary.examined::int AS examined, summary.examined < state.room AS caught_up`
}

const REPLAY = replayStatement('$1', '$2', '$3', false)

interface Chunk { queued: number, examined: number, caught_up: boolean }

/** Runs a chunk of a subscription's replay (see replayStatement): how many events it queued, and looked at. */
export async function replayChunk (query: Query, script: Script, id: string, limit: number, max: number): Promise<{ queued: number, examined: number }> {
  const [chunk] = (await query<Chunk>(REPLAY, [id, limit, max])).rows
  if (chunk === undefined) return { queued: 0, examined: 0 }
  if (!chunk.caught_up) return chunk
  // The rest, after EVENTS_LOCK: it may end the replay.
  const [, last] = await script(`SELECT pg_advisory_xact_lock(${EVENTS_LOCK}); ${replayStatement(literal(id), String(Math.trunc(limit)), String(Math.trunc(max)), true)}`)
  const [rest] = last.rows as Chunk[]
  return { queued: chunk.queued + (rest?.queued ?? 0), examined: chunk.examined }
}
