import type { FastifyBaseLogger } from 'fastify'
import { CHUNK_ROWS, type WebhookStore } from '../store/webhooks.ts'
import { PRUNE_INTERVAL_MS, RETENTION_MS } from './dispatch-policy.ts'

// The most deliveries one statement deletes: a short turn of SQLite's event loop (docs/performance.md),
// and on PostgreSQL locks and a connection held as briefly.
export const CLEANUP_CHUNK = 500

/**
 * Deletes what the outbox no longer needs, a chunk per statement, each its own write (its
 * own event-loop turn and commit), however much there is: the data of deleted plants' events
 * (read as erased already), the deliveries of deleted subscriptions, then those settled
 * longer than RETENTION_MS, then the events older than that which no delivery refers to,
 * and the subscribes' Idempotency-Keys past their 24 hours. It runs at start (resuming a
 * cleanup a crash cut short), when plants are deleted or the subscriptions change, and
 * every PRUNE_INTERVAL_MS.
 */
export class OutboxCleanup {
  readonly #store: WebhookStore
  readonly #log: FastifyBaseLogger
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #again = false
  #closed = false

  constructor (store: WebhookStore, log: FastifyBaseLogger) {
    this.#store = store
    this.#log = log
  }

  start (): void {
    this.#timer = setInterval(() => this.wake(), PRUNE_INTERVAL_MS).unref()
    this.wake()
  }

  /** Runs a cleanup now, or once more after the one under way. */
  wake (): void {
    if (this.#closed) return
    if (this.#running !== undefined) {
      this.#again = true
      return
    }
    this.#running = this.#run().finally(() => { this.#running = undefined })
  }

  /** Stops after the chunk under way; what is left goes at the next start. */
  async close (): Promise<void> {
    this.#closed = true
    clearInterval(this.#timer)
    await this.#running
  }

  async #run (): Promise<void> {
    do {
      this.#again = false
      try {
        while (!this.#closed && await this.#store.erase(CLEANUP_CHUNK));
        await this.#inChunks(async () => await this.#store.sweep(CLEANUP_CHUNK))
        const before = new Date(Date.now() - RETENTION_MS)
        await this.#inChunks(async () => await this.#store.prune(before, CLEANUP_CHUNK))
        for (let after: number | undefined = 0; after !== undefined && !this.#closed;) {
          after = await this.#store.pruneEvents(before, after, CHUNK_ROWS)
        }
        await this.#inChunks(async () => await this.#store.pruneKeys(CLEANUP_CHUNK))
      } catch (err) {
        this.#log.debug({ err }, 'webhooks: cannot clean up the outbox; trying again later')
        return
      }
    } while (this.#again && !this.#closed)
  }

  /** Runs `chunk` until it deletes less than a whole chunk: nothing is left then. */
  async #inChunks (chunk: () => Promise<number>): Promise<void> {
    while (!this.#closed && await chunk() === CLEANUP_CHUNK);
  }
}
