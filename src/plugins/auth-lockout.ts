import { normalizeIP } from '@fastify/rate-limit'
import { monotonicMs } from '../process/clock.ts'

// Past this many addresses, ended windows are swept and then the oldest dropped: a flood of addresses stays bounded.
const MAX_TRACKED = 100_000

interface Window { failures: number, endsAt: number }

/**
 * Rejected tokens per client address in fixed windows; `max` in one locks the address
 * out. Synchronous, so guesses pipelined together are counted one by one. IPv6 clients
 * count per /64 (normalizeIP): one host there holds 2^64 addresses.
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

  /** Seconds until the address may try again; 0 when it is not locked out. */
  retryAfter (ip: string, now = monotonicMs()): number {
    if (this.#windows.size === 0) return 0 // the usual case: normalizing an address costs more than the rest
    const window = this.#windows.get(normalizeIP(ip))
    if (window === undefined || window.endsAt <= now || window.failures < this.#max) return 0
    return Math.max(1, Math.ceil((window.endsAt - now) / 1000))
  }

  /** Counts one rejected token from the address; true when this one locks it out. */
  fail (ip: string, now = monotonicMs()): boolean {
    const key = normalizeIP(ip)
    const window = this.#windows.get(key)
    if (window !== undefined && window.endsAt > now) return ++window.failures === this.#max
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
