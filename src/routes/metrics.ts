import { type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import fp from 'fastify-plugin'
import { errorResponses, GUARDED } from '../../schemas/index.js'

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
        content: { 'text/plain': { schema: Type.String() } }
      },
      ...(requireToken ? errorResponses(GUARDED) : errorResponses('shutting_down'))
    }
  }
}

/** GET /metrics, Prometheus text format. */
const metricsRoute: FastifyPluginAsyncTypebox<MetricsRouteOptions> = async (app, { requireToken }) => {
  // The scope counts only behind the bearer token, where auth reads it.
  app.get('/metrics', { schema: metricsSchema(requireToken), config: { scope: 'metrics:read' } }, async (_request, reply) => {
    reply.type(app.metrics.registry.contentType)
    return await app.metrics.registry.metrics()
  })
}

export default fp(metricsRoute, { name: 'metrics-route', fastify: '5.x', dependencies: ['metrics'], encapsulate: true })
