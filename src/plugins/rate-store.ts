import type { FastifyRateLimitStore } from '@fastify/rate-limit'
import { monotonicMs } from '../process/clock.ts'

interface Window { startsAt: number, current: number }

/**
 * @fastify/rate-limit's store, counting as its LocalStore does (a window opens at a key's
 * first request) but on the monotonic clock: on Date.now(), a clock set back an hour kept
 * a token refused for that hour. Ended windows are swept once a window.
 */
export class MonotonicStore implements FastifyRateLimitStore {
  readonly #windows = new Map<string, Window>()
  #sweptAt = 0

  incr (key: string, done: (error: Error | null, result?: { current: number, ttl: number }) => void, timeWindow: number): void {
    const now = monotonicMs()
    if (now - this.#sweptAt >= timeWindow) this.#sweep(now, timeWindow)
    let window = this.#windows.get(key)
    if (window === undefined || window.startsAt + timeWindow <= now) {
      window = { startsAt: now, current: 0 }
      this.#windows.set(key, window)
    }
    window.current++
    done(null, { current: window.current, ttl: window.startsAt + timeWindow - now })
  }

  child (): MonotonicStore {
    return new MonotonicStore()
  }

  #sweep (now: number, timeWindow: number): void {
    this.#sweptAt = now
    for (const [key, window] of this.#windows) {
      if (window.startsAt + timeWindow <= now) this.#windows.delete(key)
    }
  }
}
