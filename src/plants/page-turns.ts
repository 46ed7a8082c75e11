// Bytes of pages one event-loop turn serves before the next page waits for a later turn.
const TURN_BYTES = 512 * 1024

/**
 * Large pages share the event loop's turns with every other request: within a turn, pages
 * start one after another (each once the one before is built), and past TURN_BYTES the
 * rest wait for later turns (FIFO), so the requests read in between are served. One for
 * every kind of page (plants, the change feed's pages and stream chunks): the budget of a
 * turn is the process's.
 */
export class PageTurns {
  #turn = 0
  #spentBytes = 0
  /** The turn in which the page under way started, while it is not built yet. */
  #busy: number | undefined
  readonly #waiting: Array<() => void> = []
  #turnEnding = false

  /** Reads and builds a page in its turn: `page` answers it with its bytes; one that fails spends nothing. */
  async take<Page> (page: () => Promise<{ page: Page, bytes: number }>): Promise<Page> {
    if (this.#room() && this.#waiting.length === 0) this.#busy = this.#turn
    else {
      await new Promise<void>((resolve) => {
        this.#waiting.push(resolve)
        this.#endTurn()
      })
    }
    const started = this.#turn
    let bytes = 0
    try {
      const built = await page()
      bytes = built.bytes
      return built.page
    } finally {
      this.#spentBytes += bytes
      // A page that waited on I/O past its turn holds no later one.
      if (started === this.#turn) this.#busy = undefined
      this.#endTurn()
      if (this.#room()) this.#next()
    }
  }

  /** Whether another page may start in this turn. */
  #room (): boolean {
    return this.#spentBytes < TURN_BYTES && this.#busy !== this.#turn
  }

  #next (): void {
    const next = this.#waiting.shift()
    if (next === undefined) return
    this.#busy = this.#turn
    next()
  }

  // One page at least starts each turn, the rest wait for later ones.
  #endTurn (): void {
    if (this.#turnEnding) return
    this.#turnEnding = true
    setImmediate(() => {
      this.#turnEnding = false
      this.#turn++
      this.#spentBytes = 0
      this.#next()
      if (this.#waiting.length > 0) this.#endTurn()
    })
  }
}
