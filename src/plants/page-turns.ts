import { setImmediate as nextTurn } from 'node:timers/promises'

// Bytes of pages one event-loop turn serves before the next page waits for a later turn.
const TURN_BYTES = 512 * 1024

/**
 * Every request a turn reads is handled within it: without this, a burst of large pages
 * held other clients' requests (health checks too) for seconds. Past TURN_BYTES a page
 * waits for a later turn, so other requests are read between pages.
 */
export class PageTurns {
  #spent = 0
  #resetting = false

  /** Nothing when this turn has room (the page goes on at once, in order); else a wait for a turn that has. */
  room (): Promise<void> | undefined {
    return this.#spent < TURN_BYTES ? undefined : this.#wait()
  }

  /** Counts a page's bytes against this turn. */
  spent (bytes: number): void {
    this.#spent += bytes
    if (this.#resetting) return
    this.#resetting = true
    setImmediate(() => {
      this.#resetting = false
      this.#spent = 0
    })
  }

  async #wait (): Promise<void> {
    while (this.#spent >= TURN_BYTES) await nextTurn()
  }
}
