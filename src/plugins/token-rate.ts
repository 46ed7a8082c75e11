import { monotonicMs } from '../monotonic-clock.ts'

interface Window { startsAt: number, requests: number }

/** What one request leaves of its token's budget. */
export interface Budget {
  /** Requests the token has left in its window; negative once it has gone over. */
  remaining: number
  /** Seconds until the token's window ends and its budget is full again. */
  resetSeconds: number
}

/**
 * Each token's request rate: at most `max` requests in a window of `windowMs` that
 * starts at the token's first request after the last window ended, the way
 * @fastify/rate-limit's local store counted them. Counted synchronously, in the auth
 * hook that has just identified the token: that plugin's handler awaited several
 * promises a request, and without it memory-store creates ran 4% faster (three
 * alternating runs), for a limit that no legitimate client reaches. Keyed by the
 * token's name (only identified tokens are counted), so a reloaded tokens file keeps
 * the counts; windows that have ended are swept once a window, so the map holds only
 * the tokens in use. Timed on the monotonic clock (monotonicMs).
 */
export class TokenRate {
  readonly #windows = new Map<string, Window>()
  readonly #max: number
  readonly #windowMs: number
  #sweptAt = 0

  constructor (max: number, windowMs: number) {
    this.#max = max
    this.#windowMs = windowMs
  }

  /** Counts one request of the token. */
  take (name: string): Budget {
    const now = monotonicMs()
    if (now - this.#sweptAt >= this.#windowMs) this.#sweep(now)
    let window = this.#windows.get(name)
    if (window === undefined || window.startsAt + this.#windowMs <= now) {
      window = { startsAt: now, requests: 0 }
      this.#windows.set(name, window)
    }
    window.requests++
    return {
      remaining: this.#max - window.requests,
      resetSeconds: Math.ceil((window.startsAt + this.#windowMs - now) / 1000)
    }
  }

  #sweep (now: number): void {
    this.#sweptAt = now
    for (const [name, window] of this.#windows) {
      if (window.startsAt + this.#windowMs <= now) this.#windows.delete(name)
    }
  }
}
