import { type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import fp from 'fastify-plugin'
import { errorResponses, GUARDED } from '../../schemas/index.ts'

// An excerpt: the service writes every metric, with its help text and histogram buckets.
const exposition = `# TYPE http_request_duration_seconds histogram
http_request_duration_seconds_sum{method="POST",route="/plants",status="200"} 0.0115
http_request_duration_seconds_count{method="POST",route="/plants",status="200"} 2
# TYPE plant_store_commit_batch_size histogram
plant_store_commit_batch_size_sum 3
plant_store_commit_batch_size_count 3
# TYPE plant_store_webhook_deliveries_pending gauge
plant_store_webhook_deliveries_pending 0
`

export interface MetricsRouteOptions {
  /** Behind the bearer token (METRICS_REQUIRE_TOKEN), or public. */
  requireToken: boolean
}

function metricsSchema (requireToken: boolean) {
  return {
    operationId: 'metrics',
    summary: 'Prometheus metrics',
    description: 'Request counts and latency by route and status, store operation latency, group-commit batch sizes, process metrics.',
    tags: ['health'],
    ...(requireToken ? {} : { security: [] }),
    response: {
      200: {
        description: 'Prometheus text exposition format 0.0.4',
        content: { 'text/plain': { schema: Type.String({ examples: [exposition] }) } }
      },
      ...(requireToken ? errorResponses(GUARDED) : errorResponses('shutting_down'))
    }
  }
}

/** GET /metrics, Prometheus text format. */
const metricsRoute: FastifyPluginAsyncTypebox<MetricsRouteOptions> = async (app, { requireToken }) => {
  // The scope counts only behind the bearer token, where auth reads it.
  app.get('/metrics', { schema: metricsSchema(requireToken), config: { scope: 'metrics:read', quietLog: true } }, async (_request, reply) => {
    reply.type(app.metrics.registry.contentType)
    return await app.metrics.exposition()
  })
}

export default fp(metricsRoute, { name: 'metrics-route', fastify: '5.x', dependencies: ['metrics'], encapsulate: true })
