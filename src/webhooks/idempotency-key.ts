import { createHash } from 'node:crypto'
import { parseItem } from 'structured-headers'
import { IDEMPOTENCY_KEY_HOURS, IDEMPOTENCY_KEY_MAX_LENGTH, MAX_IDEMPOTENCY_KEYS } from '../../schemas/idempotency.ts'
import { PLANT_CREATED, type NewSubscription } from '../../schemas/webhook.ts'
import {
  IdempotencyKeyInUse, IdempotencyKeyInvalid, IdempotencyKeyReused, IdempotencyKeysExhausted, withHeaders
} from '../http/errors.ts'
import type { KeyClaim, KeyRequest } from '../store/idempotency-keys.ts'
import type { WebhookStore } from '../store/webhooks.ts'
import type { Token } from '../tokens/registry.ts'

// The Idempotency-Key of POST /webhooks (draft-ietf-httpapi-idempotency-key-header-07): its
// value a Structured Field string, parsed by structured-headers; a bare key (as clients
// written before the draft send one) is taken when its characters need no quoting.
const BARE_KEY = /^[A-Za-z0-9._~:+/=-]+$/

/** The key a request sends, undefined for none; a malformed one is a 400. */
export function idempotencyKey (header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  // Node joins a repeated header with ", ": not one string.
  const value = [header].flat().join(', ').trim()
  if (value.length > IDEMPOTENCY_KEY_MAX_LENGTH) throw new IdempotencyKeyInvalid(`is longer than ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`)
  if (!value.startsWith('"')) {
    if (BARE_KEY.test(value)) return value
    throw new IdempotencyKeyInvalid('is not a Structured Field string')
  }
  let item
  try {
    item = parseItem(value)
  } catch {
    throw new IdempotencyKeyInvalid('is not a Structured Field string')
  }
  if (typeof item[0] !== 'string') throw new IdempotencyKeyInvalid('is not a Structured Field string')
  if (item[0] === '') throw new IdempotencyKeyInvalid('is empty')
  return item[0]
}

/** The key as the store keeps it: the token's, and the request's meaning (its url and events) as a digest. */
function keyRequest (token: Token, key: string, { url, events = [PLANT_CREATED] }: NewSubscription): KeyRequest {
  const digest = (...parts: Array<string | Buffer>): string => parts.reduce((hash, part) => hash.update(part), createHash('sha256')).digest('base64url')
  return {
    // Not the token's SHA-256 as such: the tokens file's entries are not to be found in the database.
    scope: digest('plant-store idempotency-key scope\n', token.hash),
    key,
    fingerprint: digest(JSON.stringify([url, [...events].sort()]))
  }
}

/**
 * Claims the request's key: the claim to run under, the subscription its first request
 * created, or nothing without a key. Throws the draft's 409 and 422, and a 429 past the bound.
 */
export async function claimKey (store: WebhookStore, header: string | string[] | undefined, token: Token, body: NewSubscription): Promise<{ claim?: KeyClaim, answered?: string }> {
  const key = idempotencyKey(header)
  if (key === undefined) return {}
  const outcome = await store.claimKey(keyRequest(token, key, body))
  switch (outcome.kind) {
    case 'claimed': return { claim: outcome.claim }
    case 'answered': return { answered: outcome.webhookId }
    case 'running': throw withHeaders(new IdempotencyKeyInUse(), { 'retry-after': '1' })
    case 'reused': throw new IdempotencyKeyReused(String(IDEMPOTENCY_KEY_HOURS))
    case 'exhausted': throw withHeaders(new IdempotencyKeysExhausted(String(MAX_IDEMPOTENCY_KEYS)), { 'retry-after': String(outcome.retryAfterSeconds) })
  }
}
