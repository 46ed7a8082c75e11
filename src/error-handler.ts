import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
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
  const message = status === 500
    ? 'internal server error; the cause is in the service log'
    : clearer[error.code]?.(request) ?? error.message
  return reply.code(status).send(errorBody(status, message))
}

function errorBody (status: number, message: string): ErrorBody {
  return { error: status, message }
}

export function notFoundHandler (request: FastifyRequest): never {
  throw new RouteNotFound(request.method, request.url.split('?', 1)[0].slice(0, 200))
}

/**
 * Requests Node rejects before Fastify sees them (headers too slow, too large, or not
 * HTTP) get the Error shape too, written straight to the socket, which is then closed.
 */
export function clientErrorHandler (err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [status, message] = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? [408, 'the request did not arrive within the time limit']
    : err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'the request headers are larger than the limit']
      : [400, 'the request is not valid HTTP']
  if (socket.writable) {
    const body = JSON.stringify(errorBody(status, message))
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy()
}
