import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { errorResponses } from '../schemas/index.js'
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client'

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
    help: 'Writes committed together in one group-commit transaction',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers: [this.registry]
  })

  constructor () {
    collectDefaultMetrics({ register: this.registry })
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

/**
 * Measures every completed request. A plugin with fastify-plugin so the hook sees
 * every route and the plants module can record its store operations.
 */
async function metrics (app: FastifyInstance): Promise<void> {
  const registry = new Metrics()
  app.decorate('metrics', registry)
  // prom-client hashes a label object on every observe; a child per label set, kept,
  // costs that once.
  const series = new Map<string, ReturnType<typeof registry.requests.labels>>()
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    const key = `${request.method} ${route} ${reply.statusCode}`
    let child = series.get(key)
    if (child === undefined) {
      child = registry.requests.labels(request.method, route, String(reply.statusCode))
      series.set(key, child)
    }
    child.observe(reply.elapsedTime / 1000)
    done()
  })
}

export default fp(metrics, { name: 'metrics' })

/** GET /metrics, Prometheus text format: public, or behind the token with METRICS_REQUIRE_TOKEN. */
export async function metricsRoute (app: FastifyInstance, { requireToken }: { requireToken: boolean }): Promise<void> {
  app.get('/metrics', {
    schema: {
      operationId: 'metrics',
      summary: 'Prometheus metrics',
      description: 'Request counts and latency by route and status, store operation latency, group-commit batch sizes, process metrics.',
      tags: ['health'],
      ...(requireToken ? {} : { security: [] }),
      response: {
        200: {
          description: 'Prometheus text exposition format 0.0.4',
          content: { 'text/plain': { schema: { type: 'string' } } }
        },
        ...(requireToken ? errorResponses(401, 429, [503, 'Shutting down']) : errorResponses([503, 'Shutting down']))
      }
    }
  }, async (_request, reply) => {
    reply.type(app.metrics.registry.contentType)
    return await app.metrics.registry.metrics()
  })
}
