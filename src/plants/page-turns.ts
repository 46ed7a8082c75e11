// Bytes of pages one event-loop turn serves before the next page waits for a later turn.
const TURN_BYTES = 512 * 1024

/**
 * Large pages share the event loop's turns with every other request: past TURN_BYTES in a
 * turn, pages wait their turn one by one (FIFO), so the requests read in between are served.
 */
export class PageTurns {
  #spent = 0
  readonly #waiting: Array<() => void> = []
  #turnEnding = false

  /** Nothing when this turn has room (the page goes on at once, in order); else a wait for a turn that has. */
  room (): Promise<void> | undefined {
    if (this.#spent < TURN_BYTES && this.#waiting.length === 0) return undefined
    return new Promise<void>((resolve) => {
      this.#waiting.push(resolve)
      this.#endTurn()
    })
  }

  /** Counts a page's bytes (0 for one that failed) and lets the next page start if the turn has room. */
  spent (bytes: number): void {
    this.#spent += bytes
    this.#endTurn()
    if (this.#spent < TURN_BYTES) this.#waiting.shift()?.()
  }

  // One page at least starts each turn, the rest wait for later ones.
  #endTurn (): void {
    if (this.#turnEnding) return
    this.#turnEnding = true
    setImmediate(() => {
      this.#turnEnding = false
      this.#spent = 0
      this.#waiting.shift()?.()
      if (this.#waiting.length > 0) this.#endTurn()
    })
  }
}
