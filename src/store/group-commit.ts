import { tracing } from '../tracing/hooks.ts'
import { StoreBusy, StoreUnavailable } from './errors.ts'

/** The most bytes (as sizeOf counts them) one batch holds; an item larger than this is a batch of its own. */
export const MAX_BATCH_BYTES = 4 * 1024 * 1024

export interface GroupCommitOptions<Item, Result> {
  /**
   * Writes the items in one transaction and returns their results in order; when it throws
   * it stored none. StoreUnavailable or StoreBusy fail the whole batch, other errors split it.
   * Each item comes with the trace context of the request that submitted it, for its event to keep.
   */
  write: (items: Item[], traceContexts: Array<string | undefined>) => Result[] | Promise<Result[]>
  /** An estimate of the memory an item holds while it waits, in bytes. */
  sizeOf: (item: Item) => number
  /** The most items one batch holds. */
  maxBatch: number
  /** The most bytes that may wait: past it a submit is refused at once with StoreBusy. */
  maxQueueBytes: number
  /** Told the size of every write, those of a split batch included. */
  onBatch?: (size: number) => void
  /** The count of waiting bytes, when shared with other queues that maxQueueBytes bounds in total. */
  waiting?: WaitingBytes
}

/** The bytes of every item submitted and not yet answered, those being written included. */
export interface WaitingBytes { bytes: number }

interface Entry<Item, Result> {
  item: Item
  bytes: number
  resolve: (result: Result) => void
  reject: (error: unknown) => void
  /** Its wait in the queue, when traced. */
  wait: unknown
  /** The W3C traceparent of the traced request that submitted it. */
  traceContext: string | undefined
}

/**
 * Group commit: writes that arrive together share one transaction, so one fsync makes a
 * whole batch durable rather than one per request. What waits is bounded in bytes, and an
 * item the database refuses is isolated (#commit) rather than failing its batch.
 */
export class GroupCommit<Item, Result> {
  readonly #options: GroupCommitOptions<Item, Result>
  #queue: Array<Entry<Item, Result>> = []
  readonly #waiting: WaitingBytes
  #scheduled = false
  #flushing: Promise<void> | undefined

  constructor (options: GroupCommitOptions<Item, Result>) {
    this.#options = options
    this.#waiting = options.waiting ?? { bytes: 0 }
  }

  /**
   * Resolves with the item's own result once its batch is committed, or rejects with its
   * own error. Rejects at once with StoreBusy when the queue is full; an item is always
   * taken when nothing waits, however large (the body limit bounds a plant, this a queue).
   */
  async submit (item: Item): Promise<Result> {
    const bytes = this.#options.sizeOf(item)
    if (this.#waiting.bytes > 0 && this.#waiting.bytes + bytes > this.#options.maxQueueBytes) throw new StoreBusy()
    this.#waiting.bytes += bytes
    return await new Promise<Result>((resolve, reject) => {
      const spans = tracing.spans
      this.#queue.push({ item, bytes, resolve, reject, wait: spans?.queued(), traceContext: spans?.traceContext() })
      this.#schedule()
    })
  }

  /** Resolves when everything submitted so far has been written and answered. */
  async drain (): Promise<void> {
    while (this.#queue.length > 0 || this.#flushing !== undefined) {
      await (this.#flushing ?? this.#flush())
    }
  }

  // Batched until the loop's check phase: every write read in this turn joins, none waits longer.
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
    this.#flushing = this.#commit(this.#takeBatch())
    await this.#flushing
    this.#flushing = undefined
    if (this.#queue.length > 0) this.#schedule()
  }

  /** The oldest items: at least one, at most maxBatch of them and MAX_BATCH_BYTES. */
  #takeBatch (): Array<Entry<Item, Result>> {
    let count = 0
    let bytes = 0
    for (const entry of this.#queue) {
      if (count === this.#options.maxBatch || (count > 0 && bytes + entry.bytes > MAX_BATCH_BYTES)) break
      count++
      bytes += entry.bytes
    }
    return this.#queue.splice(0, count)
  }

  /**
   * Writes a batch and answers its items. A batch refused for anything but an outage or
   * a busy store is split in halves until the item at fault stands alone with its error.
   */
  async #commit (batch: Array<Entry<Item, Result>>): Promise<void> {
    this.#options.onBatch?.(batch.length)
    let results: Result[]
    const items = batch.map((entry) => entry.item)
    const traceContexts = batch.map((entry) => entry.traceContext)
    const spans = tracing.spans
    try {
      results = await (spans === undefined
        ? this.#options.write(items, traceContexts)
        : spans.batch(batch.map((entry) => entry.wait), batch.length, async () => await this.#options.write(items, traceContexts)))
    } catch (error) {
      if (batch.length === 1 || error instanceof StoreUnavailable || error instanceof StoreBusy) {
        for (const entry of batch) this.#answer(entry).reject(error)
        return
      }
      const half = Math.ceil(batch.length / 2)
      await this.#commit(batch.slice(0, half))
      await this.#commit(batch.slice(half))
      return
    }
    batch.forEach((entry, i) => this.#answer(entry).resolve(results[i]))
  }

  /** Releases the entry's bytes from the queue, for the caller to answer it. */
  #answer (entry: Entry<Item, Result>): Entry<Item, Result> {
    this.#waiting.bytes -= entry.bytes
    return entry
  }
}
