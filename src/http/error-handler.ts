import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { ErrorBody } from '../../schemas/index.js'
import { PlantRejected, RouteNotFound, StoreBusy, StoreUnavailable, withHeaders } from './errors.js'
import { setAnswerHeaders } from './answer-headers.js'
import * as store from '../store/errors.js'

// No answer reflects more of the client's input than this many characters.
const MAX_ECHO = 100

// Fastify's own wording for errors it raises, replaced where a client could not act on
// it or where it would echo the request.
const clearer: Record<string, (request: FastifyRequest) => string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (request) =>
    `Content-Type ${echo(request.headers['content-type'] ?? '(none)')} is not supported: send application/json`,
  FST_ERR_CTP_BODY_TOO_LARGE: (request) =>
    `the body is larger than the limit of ${request.routeOptions.bodyLimit} bytes`,
  FST_ERR_BAD_URL: () => 'the path is not valid percent-encoding',
  FST_ERR_MAX_PARAM_LENGTH: (request) => `a path parameter is longer than ${request.server.initialConfig.maxParamLength} characters`
}

// Framework errors whose status Fastify words otherwise: an over-long id is a bad id.
const statusOf: Record<string, number> = { FST_ERR_MAX_PARAM_LENGTH: 400 }

type ServiceError = FastifyError & { headers?: Record<string, string> }

/**
 * The one place a failure becomes a response: `{ error: <status>, message }`.
 * Fastify's own errors (validation, media type, body size) carry their status, the
 * store's errors are mapped to theirs; anything else is a bug, answered 500 with its
 * details kept to the log.
 */
export function errorHandler (thrown: ServiceError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const error = fromStore(thrown) ?? thrown
  const given = statusOf[error.code] ?? error.statusCode
  const status = given !== undefined && given >= 400 && given <= 599 ? given : 500
  // Only a bug is logged here: every other failure is intended, and its status is in
  // the request's line; a failing store logs its outage once itself.
  if (status === 500) request.log.error({ err: thrown }, 'request failed')
  if (error.headers !== undefined) reply.headers(error.headers)
  const message = status === 500
    ? 'internal server error; the cause is in the service log'
    : clearer[error.code]?.(request) ?? error.message
  return reply.code(status).send(errorBody(status, message))
}

function fromStore (error: Error): ServiceError | undefined {
  if (error instanceof store.StoreUnavailable) return new StoreUnavailable({ cause: error })
  if (error instanceof store.StoreBusy) return withHeaders(new StoreBusy(), { 'retry-after': '1' })
  if (error instanceof store.PlantRejected) return new PlantRejected()
  return undefined
}

function errorBody (status: number, message: string): ErrorBody {
  return { error: status, message }
}

function echo (text: string): string {
  return text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}…` : text
}

/**
 * Every request reaches this hook before its body is read: one to no route is answered
 * 404 here, so a stranger cannot make the service parse a body nobody will use.
 */
export function refuseUnrouted (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  if (request.is404) return done(new RouteNotFound(request.method, echo(request.url.split('?', 1)[0])))
  done()
}

export function notFoundHandler (request: FastifyRequest): never {
  throw new RouteNotFound(request.method, echo(request.url.split('?', 1)[0]))
}

/**
 * Errors Fastify raises before any hook runs (a path that is not valid percent-encoding,
 * an over-long path parameter) take the same path as every other error, with the
 * headers every answer carries.
 */
export function frameworkErrorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  setAnswerHeaders(request, reply)
  errorHandler(error, request, reply)
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
