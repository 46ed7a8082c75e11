import pg from 'pg'
import { PLANT_CREATED } from '../../../schemas/webhook.ts'
import { KEY_LEASE_MS, KEY_TTL_MS, keyOutcome, MAX_KEYS, type KeyClaim, type KeyOutcome, type KeyRequest, type SubscribeOutcome } from '../idempotency-keys.ts'
import { eventMask, type StoredSubscription } from '../webhooks.ts'

// A subscribe and its Idempotency-Key as the PostgreSQL store writes them: scripts of
// statements sent together, one implicit transaction each, their values escaped by pg (a
// script's statements take no parameters). Times are the database's, which every instance shares.

const literal = (value: string): string => pg.escapeLiteral(value)
const TTL = `${KEY_TTL_MS} * interval '1 millisecond'`

// The count and the insert run after the lock (any fixed number, the same in every
// instance): subscribes take turns, across instances, and the limit holds. In READ
// COMMITTED the INSERT, begun once the lock is taken, counts what every subscribe before it committed.
const SUBSCRIBE_LOCK = '7140531842950291128'
// With the token's digest (hashtext), the lock a token's claims take turns under: its count of keys holds across instances.
const KEYS_LOCK = 714053184

/** Whether the claim still holds its key (a request running past the lease may have lost it to a retry). */
function held ({ scope, key, lease }: KeyClaim): string {
  return `EXISTS (SELECT 1 FROM idempotency_keys WHERE scope = ${literal(scope)} AND key = ${literal(key)} AND lease = ${literal(lease)})`
}

/** The subscribe script: its second statement's row says why nothing was inserted, if nothing was. */
export function subscribeScript ({ id, url, secret, events = [PLANT_CREATED], createdAt }: StoredSubscription, max: number, claim?: KeyClaim): string {
  const holds = claim === undefined ? 'true' : held(claim)
  const room = `(SELECT count(*) FROM webhooks) < ${Math.trunc(max)}`
  const completed = claim === undefined
    ? ''
    : `; UPDATE idempotency_keys SET subscription_id = ${literal(id)}, lease = NULL, leased_at = NULL
        WHERE scope = ${literal(claim.scope)} AND key = ${literal(claim.key)} AND lease = ${literal(claim.lease)}
          AND EXISTS (SELECT 1 FROM webhooks WHERE id = ${literal(id)})`
  return `SELECT pg_advisory_xact_lock(${SUBSCRIBE_LOCK});
    SELECT ${holds} AS held;
    INSERT INTO webhooks (id, url, secret, events, created_at)
      SELECT ${literal(id)}, ${literal(url)}, ${literal(secret)}, ${eventMask(events)}, ${literal(createdAt.toISOString())}::timestamptz
      WHERE ${room} AND ${holds}${completed}`
}

/** What the subscribe script's results say. */
export function subscribeOutcome (results: pg.QueryResult[]): SubscribeOutcome {
  if (results[2].rowCount === 1) return 'subscribed'
  return results[1].rows[0].held === true ? 'full' : 'lost'
}

/**
 * The claim script: an expired row of the key is replaced; a new key is written while the
 * token has fewer than MAX_KEYS; a key whose request was abandoned (same body, still running
 * past the lease) is taken over. The last statement reads the key's row as the claim left it.
 */
export function claimScript ({ scope, key, fingerprint }: KeyRequest, lease: string): string {
  const [s, k, f, l] = [scope, key, fingerprint, lease].map(literal)
  const live = `SELECT created_at FROM idempotency_keys WHERE scope = ${s} AND created_at >= now() - ${TTL}`
  return `SELECT pg_advisory_xact_lock(${KEYS_LOCK}, hashtext(${s}));
    DELETE FROM idempotency_keys WHERE scope = ${s} AND key = ${k} AND created_at < now() - ${TTL};
    INSERT INTO idempotency_keys (scope, key, fingerprint, lease, leased_at, created_at)
      SELECT ${s}, ${k}, ${f}, ${l}, now(), now() WHERE (SELECT count(*) FROM (${live} LIMIT ${MAX_KEYS}) AS kept) < ${MAX_KEYS}
      ON CONFLICT (scope, key) DO UPDATE SET lease = EXCLUDED.lease, leased_at = now()
      WHERE idempotency_keys.subscription_id IS NULL AND idempotency_keys.fingerprint = EXCLUDED.fingerprint
        AND idempotency_keys.leased_at < now() - ${KEY_LEASE_MS} * interval '1 millisecond';
    SELECT keys.fingerprint, keys.subscription_id, keys.lease,
      ceil(extract(epoch FROM (SELECT min(created_at) FROM (${live}) AS kept) + ${TTL} - now()))::int AS retry_after
    FROM (SELECT 1) AS one LEFT JOIN idempotency_keys AS keys ON keys.scope = ${s} AND keys.key = ${k}`
}

interface ClaimRow { fingerprint: string | null, subscription_id: string | null, lease: string | null, retry_after: number | null }

/** What the claim script's results say: no row is a new key refused for the token's count. */
export function claimOutcome (results: pg.QueryResult[], request: KeyRequest, lease: string): KeyOutcome {
  const row = results[3].rows[0] as ClaimRow
  if (row.fingerprint === null) return { kind: 'exhausted', retryAfterSeconds: Math.max(1, row.retry_after ?? 1) }
  return keyOutcome({ fingerprint: row.fingerprint, webhookId: row.subscription_id, lease: row.lease }, request, lease)
}

export const RELEASE_KEY = 'DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND lease = $3'

export const PRUNE_KEYS = `DELETE FROM idempotency_keys WHERE (scope, key) IN (
  SELECT scope, key FROM idempotency_keys WHERE created_at < now() - ${TTL} LIMIT $1 FOR UPDATE SKIP LOCKED)`
