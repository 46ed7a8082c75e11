import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

// Counting pending deliveries is a query of the store, for every instance: scrapes share a count this old.
const PENDING_MAX_AGE_MS = 5000

/** One computed exposition, and when it was computed. */
interface Scrape { body: string, at: number }

/** Everything /metrics reports, in a registry of the app's own (tests build many apps). */
export class Metrics {
  readonly registry = new Registry()

  readonly requests = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Completed HTTP requests by method, route and status; _count is the request count',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry]
  })

  readonly storeOperations = new Histogram({
    name: 'plant_store_operation_duration_seconds',
    help: 'Store operations by operation and outcome, group-commit wait included',
    labelNames: ['operation', 'outcome'] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry]
  })

  readonly commitBatches = new Histogram({
    name: 'plant_store_commit_batch_size',
    help: 'Writes per group-commit transaction, the halves a refused batch is split into included',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers: [this.registry]
  })

  readonly webhookAttempts = new Histogram({
    name: 'plant_store_webhook_attempt_duration_seconds',
    help: 'Webhook delivery attempts by outcome (delivered, retried, failed: the last attempt failed); _count is the attempt count',
    labelNames: ['outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry]
  })

  /** Read when /metrics is scraped (at most every PENDING_MAX_AGE_MS), from the source the webhooks module sets. */
  pendingDeliveries: () => Promise<number> = async () => 0

  readonly webhookPending: Gauge = new Gauge({
    name: 'plant_store_webhook_deliveries_pending',
    help: `Webhook deliveries waiting for an attempt or for their next one, for every instance of the store; counted at most every ${PENDING_MAX_AGE_MS / 1000} s`,
    registers: [this.registry],
    collect: async () => {
      if (performance.now() - this.#countedAt < PENDING_MAX_AGE_MS) return
      this.#counting ??= this.#countPending().finally(() => { this.#counting = undefined })
      await this.#counting
    }
  })

  #countedAt = -Infinity
  #counting: Promise<void> | undefined
  readonly #maxAgeMs: number
  #scrape: Promise<Scrape> | undefined

  /** `maxAgeMs`: how long one computed exposition answers every scrape; 0: only those that arrived while it was computed. */
  constructor (maxAgeMs = 0) {
    this.#maxAgeMs = maxAgeMs
    collectDefaultMetrics({ register: this.registry })
  }

  /**
   * The exposition, computed at most once per `maxAgeMs`: computing it costs many times a
   * request (docs/performance.md), which a flood of scrapes must not cost the API.
   */
  async exposition (): Promise<string> {
    const asked = performance.now()
    const cached = this.#scrape
    if (cached !== undefined) {
      const { body, at } = await cached
      // One computed since this scrape arrived is fresh for it, whatever maxAgeMs.
      if (at >= asked || asked - at < this.#maxAgeMs) return body
      if (this.#scrape === cached) this.#scrape = undefined
    }
    this.#scrape ??= this.registry.metrics().then(
      (body) => ({ body, at: performance.now() }),
      (err: unknown) => { this.#scrape = undefined; throw err })
    return (await this.#scrape).body
  }

  async #countPending (): Promise<void> {
    // A store that does not answer leaves the last count: /metrics still answers.
    try {
      this.webhookPending.set(await this.pendingDeliveries())
    } catch {}
    this.#countedAt = performance.now()
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

/** Measures every completed request; fastify-plugin so the hook sees every route and other modules reach app.metrics. */
async function metrics (app: FastifyInstance): Promise<void> {
  const registry = new Metrics(app.config.METRICS_CACHE_MS)
  app.decorate('metrics', registry)
  app.addHook('onResponse', (request, reply, done) => {
    registry.requests.observe({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: reply.statusCode }, reply.elapsedTime / 1000)
    done()
  })
}

export default fp(metrics, { name: 'metrics', fastify: '5.x', decorators: { fastify: ['config'] } })
