import type { FastifyBaseLogger } from 'fastify'
import { CHUNK_ROWS, type StoredSubscription, type WebhookStore } from '../store/webhooks.ts'

/**
 * Warns of subscriptions disabled, and queues what a re-enabled one missed, one chunk per
 * statement, so that no statement grows with the data.
 */
export class OutboxUpkeep {
  readonly #store: WebhookStore
  readonly #log: FastifyBaseLogger
  /** Subscriptions with a replay chunk under way. */
  readonly #replaying = new Set<string>()
  /** Those seen disabled at the last refresh: each is warned of once. */
  #disabled = new Set<string>()
  #closed = false

  constructor (store: WebhookStore, log: FastifyBaseLogger) {
    this.#store = store
    this.#log = log
  }

  close (): void {
    this.#closed = true
  }

  /** Told the subscriptions as read: warns of those newly disabled, and replays for those enabled again. */
  refreshed (subscriptions: StoredSubscription[]): void {
    for (const { id, disabledAt, missedSince, replaying } of subscriptions) {
      if (disabledAt !== undefined && !this.#disabled.has(id)) {
        this.#log.warn({ webhook: id, disabledAt, missedSince }, 'webhook subscription disabled: its pending deliveries reached WEBHOOK_MAX_PENDING; new plants are not announced to it until POST /webhooks/{id}/enable')
      }
      if (replaying === true) this.replay(id)
    }
    this.#disabled = new Set(subscriptions.filter(({ disabledAt }) => disabledAt !== undefined).map(({ id }) => id))
  }

  /**
   * Queues the events a re-enabled subscription missed, a chunk per statement, chunk after
   * chunk while whole ones are queued (its new events wait for the replay); at its bound,
   * it goes on at the next refresh.
   */
  replay (id: string): void {
    if (this.#closed || this.#replaying.has(id)) return
    this.#replaying.add(id)
    this.#chunks(id)
      .catch((err: unknown) => this.#log.debug({ err, webhook: id }, 'webhooks: cannot replay missed events; trying again'))
      .finally(() => this.#replaying.delete(id))
  }

  async #chunks (id: string): Promise<void> {
    while (!this.#closed && await this.#store.replay(id, CHUNK_ROWS) === CHUNK_ROWS);
  }
}
