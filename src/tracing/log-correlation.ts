import { SpanStatusCode } from '@opentelemetry/api'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type {} from '@fastify/otel'

/**
 * Joins a traced request's logs and span: every line it logs carries its trace_id and
 * span_id (the request's logger replaced by a child that says them), and its span's status
 * says the answer's Error code. Added to each Fastify instance after @fastify/otel's hooks.
 */
export function correlate (app: FastifyInstance): void {
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const span = request.opentelemetry().span
    if (span?.isRecording() === true) {
      const { traceId, spanId } = span.spanContext()
      request.log = reply.log = request.log.child({ trace_id: traceId, span_id: spanId })
    }
    done()
  })
  // After @fastify/otel's onError, which writes the error's message: a parser's may quote the body.
  app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
    if (reply.statusCode >= 400) request.opentelemetry().span?.setStatus({ code: SpanStatusCode.ERROR, message: reply.errorCode ?? undefined })
    done(null, payload)
  })
}
