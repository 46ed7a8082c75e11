import { setTimeout as sleep } from 'node:timers/promises'
import { StoreUnavailable } from './errors.ts'
import type { StoreContext } from './store.ts'

// While down, how long between probes: how soon after the database is back the store
// serves again.
const PROBE_INTERVAL_MS = 500

/**
 * Whether a store can serve now: an outage and its recovery are logged once each. Given a
 * probe it is a circuit breaker (while down, `check` refuses at once and only the probe
 * ends the outage); without one (SQLite fails at once) the first call to succeed ends it.
 */
export class Outage {
  readonly #log: StoreContext['log']
  readonly #store: string
  readonly #probe: (() => Promise<void>) | undefined
  readonly #closing = new AbortController()
  #down = false
  #cause: unknown
  #writeFailed = false
  #probing: Promise<void> | undefined

  /** `store` names the engine in the log lines. */
  constructor (log: StoreContext['log'], store: string, probe?: () => Promise<void>) {
    this.#log = log
    this.#store = store
    this.#probe = probe
  }

  /**
   * Throws StoreUnavailable, with the outage's cause, while the store does not answer. A
   * store that only takes no writes answers at once: every operation tries it.
   */
  check (): void {
    if (this.#down && !this.#writeFailed) throw new StoreUnavailable({ cause: this.#cause })
  }

  /**
   * Marks the store down and returns the error to throw. `writing`: it answers but takes
   * no writes (full disk, locked, read-only), which only a write that succeeds can end.
   * `why`: the line to log instead of the outage's.
   */
  fail (err: unknown, writing = false, why?: string): StoreUnavailable {
    if (!this.#down || (this.#writeFailed && !writing)) {
      this.#down = true
      this.#cause = err
      this.#writeFailed = writing
      if (writing) this.#log.error({ err }, `the ${this.#store} store takes no writes; answering 503 to them until it does`)
      else this.#log.error({ err }, why ?? `the ${this.#store} store is unavailable; answering 503 until it recovers`)
      if (!writing && this.#probe !== undefined && this.#probing === undefined && !this.#closing.signal.aborted) {
        this.#probing = this.#probeUntilUp(this.#probe).finally(() => { this.#probing = undefined })
      }
    }
    return new StoreUnavailable({ cause: err })
  }

  /** Marks the store up again, logged if it was down, unless a write failed and this was no write. */
  recover (writing = false): void {
    if (!this.#down || (this.#writeFailed && !writing)) return
    this.#down = false
    this.#log.info(`the ${this.#store} store is available again`)
  }

  /** Stops the probe; resolves once none is running. */
  async close (): Promise<void> {
    this.#closing.abort()
    await this.#probing
  }

  async #probeUntilUp (probe: () => Promise<void>): Promise<void> {
    while (this.#down) {
      try {
        await sleep(PROBE_INTERVAL_MS, undefined, { signal: this.#closing.signal })
      } catch {
        return // closed
      }
      try {
        await probe()
        this.recover()
      } catch (err) {
        // Expected while the outage lasts; the outage itself is logged already.
        this.#log.debug({ err }, `the ${this.#store} store still does not answer`)
      }
    }
  }
}
