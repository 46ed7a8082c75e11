/**
 * Group commit: the creates that arrive together are written in one transaction,
 * so one durable commit (one fsync) serves many requests instead of one each.
 *
 * An item waits at most until the event loop's next check phase (setImmediate):
 * under light load a create is flushed at once, under heavy load everything that
 * arrived while the last commit was running forms the next batch. A batch holds at
 * most `maxBatch` items; one flush runs at a time.
 */
export class GroupCommit<Item, Result> {
  readonly #write: (items: Item[]) => Result[] | Promise<Result[]>
  readonly #maxBatch: number
  readonly #onBatch: (size: number) => void
  #queue: Array<{ item: Item, resolve: (result: Result) => void, reject: (error: unknown) => void }> = []
  #scheduled = false
  #flushing: Promise<void> | undefined

  constructor (write: (items: Item[]) => Result[] | Promise<Result[]>, maxBatch: number, onBatch: (size: number) => void = () => {}) {
    this.#write = write
    this.#maxBatch = maxBatch
    this.#onBatch = onBatch
  }

  /** Resolves with the item's own result once its batch is committed, or rejects with the batch's error. */
  async submit (item: Item): Promise<Result> {
    return await new Promise<Result>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject })
      this.#schedule()
    })
  }

  /** Resolves when everything submitted so far has been written and answered. */
  async drain (): Promise<void> {
    while (this.#queue.length > 0 || this.#flushing !== undefined) {
      await (this.#flushing ?? this.#flush())
    }
  }

  #schedule (): void {
    if (this.#scheduled || this.#flushing !== undefined) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      this.#flush() // never rejects: a failed write rejects its items instead
    })
  }

  async #flush (): Promise<void> {
    if (this.#flushing !== undefined || this.#queue.length === 0) return
    const batch = this.#queue.splice(0, this.#maxBatch)
    this.#onBatch(batch.length)
    this.#flushing = (async () => {
      try {
        const results = await this.#write(batch.map((entry) => entry.item))
        batch.forEach((entry, i) => entry.resolve(results[i]))
      } catch (error) {
        for (const entry of batch) entry.reject(error)
      }
    })()
    await this.#flushing
    this.#flushing = undefined
    if (this.#queue.length > 0) this.#schedule()
  }
}
