import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type {} from '@fastify/otel'

/**
 * Every line a traced request logs carries its trace_id and span_id (the request's span),
 * so logs and traces join: the request's logger is replaced by a child that says them.
 * Added after @fastify/otel's onRequest hook, which starts the span.
 */
export function correlateLogs (app: FastifyInstance): void {
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const span = request.opentelemetry().span
    if (span?.isRecording() === true) {
      const { traceId, spanId } = span.spanContext()
      request.log = reply.log = request.log.child({ trace_id: traceId, span_id: spanId })
    }
    done()
  })
}
