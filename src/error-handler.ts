import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { ErrorBody } from '../schemas/index.js'
import { RouteNotFound } from './http-errors.js'

// Fastify's own wording for errors it raises, replaced where a client could not act on it.
const clearer: Record<string, (request: FastifyRequest) => string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (request) =>
    `Content-Type ${request.headers['content-type'] ?? '(none)'} is not supported: send application/json`,
  FST_ERR_CTP_BODY_TOO_LARGE: (request) =>
    `the body is larger than the limit of ${request.routeOptions.bodyLimit} bytes`
}

type ServiceError = FastifyError & { headers?: Record<string, string> }

/**
 * The one place a failure becomes a response: `{ error: <status>, message }`.
 * Fastify's own errors (validation, media type, body size) carry their status;
 * anything without one is a bug, answered 500 with its details kept to the log.
 */
export function errorHandler (error: ServiceError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode <= 599
    ? error.statusCode
    : 500
  // Only a bug is logged here: every other failure is intended, and its status is in
  // the request's line; a failing store logs its outage once itself.
  if (status === 500) request.log.error({ err: error }, 'request failed')
  if (error.headers !== undefined) reply.headers(error.headers)
  const body: ErrorBody = {
    error: status,
    message: status === 500
      ? 'internal server error; the cause is in the service log'
      : clearer[error.code]?.(request) ?? error.message
  }
  return reply.code(status).send(body)
}

export function notFoundHandler (request: FastifyRequest): never {
  throw new RouteNotFound(request.method, request.url.split('?', 1)[0].slice(0, 200))
}
