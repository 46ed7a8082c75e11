import type Database from 'better-sqlite3'
import { KEY_LEASE_MS, KEY_TTL_MS, keyOutcome, MAX_KEYS, type KeyClaim, type KeyOutcome, type KeyRequest } from '../idempotency-keys.ts'

// The Idempotency-Keys as the SQLite store keeps them. Every method runs inside one of the
// store's write (or read) transactions: a claim's look and write are one step. Integers
// are read as bigint, times are epoch milliseconds.

interface KeyRow { fingerprint: string, subscription_id: string | null, lease: string | null, leased_at: bigint | null, created_at: bigint }
interface Live { count: bigint, oldest: bigint | null }

export class SqliteKeys {
  readonly #statements

  constructor (db: Database.Database) {
    this.#statements = {
      get: db.prepare<[string, string], KeyRow>('SELECT fingerprint, subscription_id, lease, leased_at, created_at FROM idempotency_keys WHERE scope = ? AND key = ?'),
      // The token's keys still kept, counted up to the bound: no statement reads more.
      live: db.prepare<[{ scope: string, since: number, max: number }], Live>(`SELECT count(*) AS count, min(created_at) AS oldest FROM (
        SELECT created_at FROM idempotency_keys WHERE scope = @scope AND created_at >= @since ORDER BY created_at LIMIT +@max)`),
      // Replaces an expired row of the same key.
      insert: db.prepare<[string, string, string, string, number, number]>(`INSERT OR REPLACE INTO idempotency_keys
        (scope, key, fingerprint, lease, leased_at, created_at) VALUES (?, ?, ?, ?, ?, ?)`),
      takeOver: db.prepare<[string, number, string, string]>('UPDATE idempotency_keys SET lease = ?, leased_at = ? WHERE scope = ? AND key = ?'),
      held: db.prepare<[string, string, string], { lease: string }>('SELECT lease FROM idempotency_keys WHERE scope = ? AND key = ? AND lease = ?'),
      complete: db.prepare<[string, string, string, string]>(`UPDATE idempotency_keys SET subscription_id = ?, lease = NULL, leased_at = NULL
        WHERE scope = ? AND key = ? AND lease = ?`),
      release: db.prepare<[string, string, string]>('DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND lease = ?'),
      expired: db.prepare<[number], { created_at: number }>('SELECT created_at FROM idempotency_keys WHERE created_at < ? LIMIT 1'),
      prune: db.prepare<[number, number]>(`DELETE FROM idempotency_keys WHERE (scope, key) IN (
        SELECT scope, key FROM idempotency_keys WHERE created_at < ? LIMIT +?)`)
    }
  }

  /** Claims the key for a request holding `lease`, now; or says why not. */
  claim (request: KeyRequest, lease: string, now: number): KeyOutcome {
    const { scope, key, fingerprint } = request
    const since = now - KEY_TTL_MS
    const row = this.#statements.get.get(scope, key)
    if (row !== undefined && row.created_at >= since) {
      const abandoned = row.subscription_id === null && row.fingerprint === fingerprint && Number(row.leased_at ?? 0) < now - KEY_LEASE_MS
      if (!abandoned) return keyOutcome({ fingerprint: row.fingerprint, webhookId: row.subscription_id, lease: row.lease }, request, lease)
      this.#statements.takeOver.run(lease, now, scope, key)
      return keyOutcome({ fingerprint, webhookId: null, lease }, request, lease)
    }
    const { count, oldest } = this.#statements.live.get({ scope, since, max: MAX_KEYS })!
    if (count >= MAX_KEYS) return { kind: 'exhausted', retryAfterSeconds: Math.max(1, Math.ceil((Number(oldest ?? now) + KEY_TTL_MS - now) / 1000)) }
    this.#statements.insert.run(scope, key, fingerprint, lease, now, now)
    return keyOutcome({ fingerprint, webhookId: null, lease }, request, lease)
  }

  /** Whether the claim still holds its key: a request running past the lease may have lost it to a retry. */
  holds ({ scope, key, lease }: KeyClaim): boolean {
    return this.#statements.held.get(scope, key, lease) !== undefined
  }

  /** Completes a held key with the subscription its request created. */
  complete ({ scope, key, lease }: KeyClaim, webhookId: string): void {
    this.#statements.complete.run(webhookId, scope, key, lease)
  }

  release ({ scope, key, lease }: KeyClaim): void {
    this.#statements.release.run(scope, key, lease)
  }

  /** Whether any key is older than KEY_TTL_MS: a prune with nothing to delete costs no commit. */
  anyExpired (now: number): boolean {
    return this.#statements.expired.get(now - KEY_TTL_MS) !== undefined
  }

  prune (now: number, limit: number): number {
    return this.#statements.prune.run(now - KEY_TTL_MS, limit).changes
  }
}
