import type { WebhookStatements } from './sqlite-webhook-statements.ts'

/**
 * Queues the next chunk of a subscription's replay, in the writer's transaction: `limit`
 * events looked at from replay_from, within `max` pending; how many it queued, and looked at.
 */
export function replayChunk (statements: WebhookStatements, id: string, limit: number, max: number): { queued: number, examined: number } {
  const state = statements.replayState.get(id)
  if (state === undefined) return { queued: 0, examined: 0 }
  const room = Math.min(limit, max - Number(state.pending))
  if (room <= 0) return { queued: 0, examined: 0 }
  const from = state.replay_from
  const { examined, last } = statements.replayChunk.get({ from, limit: room })!
  const queued = statements.replay.all({ webhook: id, from, limit: room, now: Date.now() })
  // A chunk short of what it looked for reached the newest event: the replay is done, and
  // the next event is announced live (one writer: none can commit in between).
  const next = Number(examined) < room ? null : last! + 1n
  statements.replayed.run({ webhook: id, count: queued.length, next })
  return { queued: queued.length, examined: Number(examined) }
}
