import { IDEMPOTENCY_KEY_HOURS, IDEMPOTENCY_KEY_LEASE_SECONDS, MAX_IDEMPOTENCY_KEYS } from '../../schemas/idempotency.ts'

// The Idempotency-Keys of subscribes, as both engines keep them: a row per token and key,
// written before the subscribe runs (so a retry meanwhile, on any instance, finds it) and
// completed in the subscribe's own transaction with the subscription it created. The row
// holds the subscription's id, not its secret: the answer is read again from the webhooks table.

export const KEY_TTL_MS = IDEMPOTENCY_KEY_HOURS * 3_600_000
export const KEY_LEASE_MS = IDEMPOTENCY_KEY_LEASE_SECONDS * 1000
export const MAX_KEYS = MAX_IDEMPOTENCY_KEYS

/** A subscribe's key, as the store keeps it. */
export interface KeyRequest {
  /** Whose key it is, a digest of the token: another token's same key is another key. */
  scope: string
  key: string
  /** The digest of what the request asks for: the same key with another one is refused. */
  fingerprint: string
}

/** A key held by the request running under it, until its subscribe completes it or it is released. */
export interface KeyClaim {
  scope: string
  key: string
  lease: string
}

/**
 * claimed: the request runs, holding the key; running: another request holds it; reused:
 * it was used for another request; answered: its request created this subscription;
 * exhausted: the token holds as many keys as it may, the oldest expiring in `retryAfterSeconds`.
 */
export type KeyOutcome =
  | { kind: 'claimed', claim: KeyClaim }
  | { kind: 'running' }
  | { kind: 'reused' }
  | { kind: 'answered', webhookId: string }
  | { kind: 'exhausted', retryAfterSeconds: number }

/** subscribed; full: at the limit of subscriptions; lost: the key it was to complete is no longer its own. */
export type SubscribeOutcome = 'subscribed' | 'full' | 'lost'

/** A key's row as a claim leaves it, classified for the request that claimed it with `lease`. */
export function keyOutcome (row: { fingerprint: string, webhookId: string | null, lease: string | null }, request: KeyRequest, lease: string): KeyOutcome {
  if (row.lease === lease) return { kind: 'claimed', claim: { scope: request.scope, key: request.key, lease } }
  if (row.fingerprint !== request.fingerprint) return { kind: 'reused' }
  if (row.webhookId !== null) return { kind: 'answered', webhookId: row.webhookId }
  return { kind: 'running' }
}
