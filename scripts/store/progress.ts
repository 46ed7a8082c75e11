// How often the line is redrawn.
const EVERY_MS = 200

/**
 * A progress line on stderr (`plants 120,000 / 1,000,000 (12%)`), redrawn in place: only
 * on a terminal, so that logs and pipes get the report alone.
 */
export class Progress {
  readonly #label: string
  readonly #total: number
  readonly #shown = process.stderr.isTTY
  #done = 0
  #drawnAt = 0

  constructor (label: string, total: number) {
    this.#label = label
    this.#total = total
  }

  add (count: number): void {
    this.#done += count
    if (!this.#shown || Date.now() - this.#drawnAt < EVERY_MS) return
    this.#drawnAt = Date.now()
    this.#draw()
  }

  /** Draws the final count and ends the line. */
  end (): void {
    if (!this.#shown) return
    this.#draw()
    process.stderr.write('\n')
  }

  #draw (): void {
    const percent = this.#total === 0 ? 100 : Math.floor(100 * this.#done / this.#total)
    process.stderr.write(`\r${this.#label} ${this.#done.toLocaleString('en')} / ${this.#total.toLocaleString('en')} (${percent}%)\x1b[K`)
  }
}
