import type { WebhookStatements } from './sqlite-webhook-statements.ts'

/**
 * Erases deleted plants' events before their deletion, in the writer's transaction: each
 * payload erased, its deliveries still pending failed. Plants of short histories share a
 * chunk: `limit` events (or plants) in all. Returns whether more may wait.
 */
export function eraseChunk (statements: WebhookStatements, limit: number): boolean {
  const now = Date.now()
  for (let budget = limit; budget > 0;) {
    const erasure = statements.erasure.get()
    if (erasure === undefined) return false
    const { plant_id: plant, before_seq: before, erased_through: after } = erasure
    const chunk = statements.erasureChunk.all({ plant, after, before, limit: budget })
    for (const seq of chunk) {
      if (statements.erase.run(seq).changes === 0) continue
      for (const { webhook_id: webhook } of statements.erased.all({ event: seq, now })) statements.settled.run(webhook)
    }
    if (chunk.length < budget) statements.erasureDone.run(plant, before)
    else statements.erasedThrough.run(chunk[chunk.length - 1], plant, before)
    budget -= Math.max(chunk.length, 1)
  }
  return true
}
