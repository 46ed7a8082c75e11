// Pages served in one event-loop turn before the next page waits for a later turn. A
// page of 100 plants is a few KiB; a page of 1000 large ones about 2 MiB and 50 ms.
const TURN_BYTES = 512 * 1024

/**
 * Large pages share the event loop's turns with every other request. Each request a
 * turn reads is handled within it: 50 connections asking at once for pages of 1000 large
 * plants held the loop for seconds, every other client's request (a health check too)
 * waiting, until overload protection refused them all. Past TURN_BYTES of pages in a
 * turn, a page waits for a later turn, and one page at least starts each turn; the other
 * requests are read and answered between them.
 */
export class PageTurns {
  #spent = 0
  readonly #waiting: Array<() => void> = []
  #turnEnding = false

  /**
   * Nothing when this turn has room for another page; else a promise that resolves once
   * a later turn has. Not a promise every time: a page with room goes on at once, in the
   * order it came, as before there were turns.
   */
  room (): Promise<void> | undefined {
    if (this.#spent < TURN_BYTES && this.#waiting.length === 0) return undefined
    return new Promise<void>((resolve) => {
      this.#waiting.push(resolve)
      this.#endTurn()
    })
  }

  /** Counts a page's bytes (0 for one that failed) against this turn, and lets the next page start if there is room left. */
  spent (bytes: number): void {
    this.#spent += bytes
    this.#endTurn()
    if (this.#spent < TURN_BYTES) this.#waiting.shift()?.()
  }

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
