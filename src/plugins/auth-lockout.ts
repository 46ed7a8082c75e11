import { normalizeIP } from '@fastify/rate-limit'
import { monotonicMs } from '../monotonic-clock.ts'

// Addresses tracked at once by default; past this the expired windows are swept, then
// the oldest dropped, so a flood of addresses cannot grow the map without bound.
const MAX_TRACKED = 100_000

interface Window { failures: number, endsAt: number }

/**
 * Counts rejected tokens per client address in fixed windows and locks an address out
 * once it has sent `max` in one. Synchronous on purpose: a failure is counted at the
 * moment its token is found wrong, so requests pipelined together are counted one by
 * one, never all checked against the same stale count. IPv6 clients count per /64
 * (@fastify/rate-limit's normalizeIP), as one host there holds 2^64 addresses. Timed
 * on the monotonic clock (monotonicMs).
 */
export class Lockout {
  readonly #windows = new Map<string, Window>()
  readonly #max: number
  readonly #windowMs: number
  readonly #maxTracked: number

  constructor (max: number, windowMs: number, maxTracked = MAX_TRACKED) {
    this.#max = max
    this.#windowMs = windowMs
    this.#maxTracked = maxTracked
  }

  /** The seconds until the address may try again, or 0 when it is not locked out. */
  retryAfter (ip: string, now = monotonicMs()): number {
    // The usual case, asked twice a request: reading an address costs more than the rest.
    if (this.#windows.size === 0) return 0
    const window = this.#windows.get(normalizeIP(ip))
    if (window === undefined || window.endsAt <= now || window.failures < this.#max) return 0
    return Math.max(1, Math.ceil((window.endsAt - now) / 1000))
  }

  /** Counts one rejected token from the address; true when this one locks the address out. */
  fail (ip: string, now = monotonicMs()): boolean {
    const key = normalizeIP(ip)
    const window = this.#windows.get(key)
    if (window !== undefined && window.endsAt > now) {
      window.failures++
      return window.failures === this.#max
    }
    this.#windows.delete(key) // re-inserted last: the map stays in order of window start
    if (this.#windows.size >= this.#maxTracked) this.#evict(now)
    this.#windows.set(key, { failures: 1, endsAt: now + this.#windowMs })
    return this.#max === 1
  }

  #evict (now: number): void {
    for (const [key, window] of this.#windows) {
      if (window.endsAt > now) break // later windows started later: none of them has ended
      this.#windows.delete(key)
    }
    if (this.#windows.size >= this.#maxTracked) this.#windows.delete(this.#windows.keys().next().value!)
  }
}
