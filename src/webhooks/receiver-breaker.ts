import { monotonicMs } from '../process/clock.ts'

interface Failing {
  /** Attempts failed in a row. */
  failures: number
  /** Pauses in this run of failures; 0 while failures are still below the threshold. */
  pauses: number
  /** Until when nothing is attempted (monotonicMs). */
  until: number
}

/**
 * A circuit breaker per subscription: after `threshold` failures in a row its deliveries
 * wait `baseMs` (doubling to `maxMs`), then one is tried alone; a success ends it. A dead
 * receiver is probed, not hammered with a connection and a log line per delivery.
 */
export class ReceiverBreaker {
  readonly #threshold: number
  readonly #baseMs: number
  readonly #maxMs: number
  readonly #failing = new Map<string, Failing>()

  constructor (threshold: number, baseMs: number, maxMs: number) {
    this.#threshold = threshold
    this.#baseMs = baseMs
    this.#maxMs = maxMs
  }

  /** How many attempts the subscription may have in flight now: all of them, one (after a pause), or none (paused). */
  allowed (id: string, concurrency: number): number {
    const failing = this.#failing.get(id)
    if (failing === undefined || failing.pauses === 0) return concurrency
    return monotonicMs() < failing.until ? 0 : 1
  }

  /**
   * Counts a failed attempt; returns how long the subscription now pauses when this
   * failure starts a pause. A failure during a pause (an attempt that was in flight when
   * it began) does not lengthen it.
   */
  failed (id: string): number | undefined {
    const now = monotonicMs()
    let failing = this.#failing.get(id)
    if (failing === undefined) {
      failing = { failures: 0, pauses: 0, until: 0 }
      this.#failing.set(id, failing)
    }
    failing.failures++
    if (failing.failures < this.#threshold || now < failing.until) return undefined
    const pause = Math.min(this.#maxMs, this.#baseMs * 2 ** Math.min(failing.pauses, 40))
    failing.pauses++
    failing.until = now + pause
    return pause
  }

  /** Counts a delivered attempt; true when it ends a pause. */
  delivered (id: string): boolean {
    const paused = (this.#failing.get(id)?.pauses ?? 0) > 0
    this.#failing.delete(id)
    return paused
  }

  /** Forgets the subscriptions `keep` says no to (deleted ones). */
  retain (keep: (id: string) => boolean): void {
    for (const id of this.#failing.keys()) if (!keep(id)) this.#failing.delete(id)
  }
}
