import { randomUUID } from 'node:crypto'
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { FastifyError, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify'
import { ERROR_CODES, type ErrorBody, type ErrorCode, type ErrorDetail } from '../../schemas/error.ts'
import { MethodNotAllowed, PlantRejected, RouteNotFound, StoreBusy, StoreUnavailable, TargetInvalid, withHeaders } from './errors.ts'
import { isOriginForm } from './request-target.ts'
import type { RouteMethods } from './route-methods.ts'
import { apiSecurityHeaders, setAnswerHeaders } from './answer-headers.ts'
import * as store from '../store/errors.ts'

// No answer reflects more of the client's input than this many characters.
const MAX_ECHO = 100

// The errors Fastify raises itself that the service answers as its own: each one's public
// code (whose status wins) and its words, replaced where a client could not act on
// Fastify's or where they would echo the request.
const fromFastify: Record<string, { code: ErrorCode, message: (request: FastifyRequest) => string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'unsupported_media_type',
    message: (request) => `Content-Type ${echo(request.headers['content-type'] ?? '(none)')} is not supported: send application/json`
  },
  FST_ERR_CTP_BODY_TOO_LARGE: {
    code: 'body_too_large',
    message: (request) => `the body is larger than the limit of ${request.routeOptions.bodyLimit} bytes`
  },
  FST_ERR_BAD_URL: { code: 'invalid_path', message: () => 'the path is not valid percent-encoding' },
  FST_ERR_MAX_PARAM_LENGTH: {
    code: 'invalid_path',
    message: (request) => `a path parameter is longer than ${request.server.initialConfig.maxParamLength} characters`
  }
}

type ServiceError = FastifyError & { headers?: Record<string, string>, details?: ErrorDetail[] }

declare module 'fastify' {
  interface FastifyReply {
    /** The code of the Error this reply answered with, for the request's log line; null for none. */
    errorCode: ErrorCode | null
  }
}

/**
 * The one place a failure becomes a response: `{ error: <status>, message, code }`,
 * with `details` for a body or parameters that are not valid. The service's own errors
 * carry their code, Fastify's are given theirs, the store's are mapped to the
 * service's; anything else is a bug, answered 500 with its details kept to the log.
 */
export function errorHandler (thrown: ServiceError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const error = fromStore(thrown) ?? thrown
  const code = codeOf(error)
  // Only a bug is logged here: every other failure is intended, and its code is in
  // the request's line; a failing store logs its outage once itself.
  if (code === 'internal_error') request.log.error({ err: thrown }, 'request failed')
  if (error.headers !== undefined) reply.headers(error.headers)
  const message = code === 'internal_error'
    ? 'internal server error; the cause is in the service log'
    : fromFastify[error.code]?.message(request) ?? error.message
  const details = error.details ?? detailsOf(error)
  const status = ERROR_CODES[code].status
  reply.errorCode = code
  return reply.code(status).send(details === undefined ? errorBody(code, message) : { ...errorBody(code, message), details })
}

function codeOf (error: ServiceError): ErrorCode {
  // @fastify/error writes codes in capitals; the catalogue's are the public, lower-case ones.
  const own = typeof error.code === 'string' ? error.code.toLowerCase() : ''
  if (Object.hasOwn(ERROR_CODES, own)) return own as ErrorCode
  if (error.validation !== undefined) return error.validationContext === 'body' ? 'invalid_body' : 'invalid_parameter'
  const known = fromFastify[error.code]
  if (known !== undefined) return known.code
  if (error.statusCode === 404) return 'route_not_found' // a static file of the docs that is not there
  // Another client error Fastify or a plugin raises (a Content-Length that does not match, say).
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) return 'invalid_request'
  return 'internal_error'
}

/** One entry per problem the validator found, each named by where it is: `body/name`, `querystring/limit`. */
function detailsOf ({ validation, validationContext }: ServiceError): ErrorDetail[] | undefined {
  return validation?.map(({ instancePath, message }: FastifySchemaValidationError) => ({
    field: `${validationContext ?? 'body'}${instancePath}`,
    message: message ?? 'is not valid'
  }))
}

// When to try the store again: a full write queue drains in about that, and an outage is
// probed twice in it (a client that retries sooner only meets the 503 again).
const RETRY_STORE_AFTER = { 'retry-after': '1' }

function fromStore (error: Error): ServiceError | undefined {
  if (error instanceof store.StoreUnavailable) return withHeaders(new StoreUnavailable({ cause: error }), RETRY_STORE_AFTER)
  if (error instanceof store.StoreBusy) return withHeaders(new StoreBusy(), RETRY_STORE_AFTER)
  if (error instanceof store.PlantRejected) return new PlantRejected()
  return undefined
}

function errorBody (code: ErrorCode, message: string): ErrorBody {
  return { error: ERROR_CODES[code].status, message, code }
}

function echo (text: string): string {
  return text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}…` : text
}

/**
 * Every request reaches this hook before its body is read: one Fastify found no route
 * for is answered here, 405 with `Allow` when the path has other methods, else 404, so
 * a stranger cannot make the service parse a body nobody will use.
 */
export function refuseUnrouted (routes: RouteMethods) {
  return (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
    done(request.is404 ? unrouted(request, routes) : undefined)
  }
}

/** Answers the requests that reach Fastify's not-found handler all the same (a docs file that is not there). */
export function notFoundHandler (routes: RouteMethods) {
  return (request: FastifyRequest): never => { throw unrouted(request, routes) }
}

function unrouted (request: FastifyRequest, routes: RouteMethods): Error {
  const path = request.url.split('?', 1)[0]
  const allowed = routes.allowed(path)
  // A path a route takes with this very method, which found nothing there (a file of the
  // docs that does not exist), is not there: a 405 would name the method it refused.
  if (allowed.length === 0 || allowed.includes(request.method)) return new RouteNotFound(request.method, echo(path))
  return withHeaders(new MethodNotAllowed(echo(request.method), echo(path), allowed.join(', ')), { allow: allowed.join(', ') })
}

/**
 * Errors Fastify raises before any hook runs (a path that is not valid percent-encoding,
 * an over-long path parameter) take the same path as every other error, with the
 * headers every answer carries.
 */
export function frameworkErrorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  setAnswerHeaders(request, reply)
  // The router refuses a target that is no path (`*health`) as a bad URL, before the hook
  // that says what is wrong with it (requireOriginForm) runs.
  const notAPath = error.code === 'FST_ERR_BAD_URL' && !isOriginForm(request)
  errorHandler(notAPath ? new TargetInvalid() : error, request, reply)
}

/**
 * Requests Node rejects before Fastify sees them (headers too slow, too large, or not
 * HTTP) get the Error shape too, written straight to the socket, which is then closed:
 * after the answers to the requests that came whole before them.
 */
export function clientErrorHandler (err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [code, message]: [ErrorCode, string] = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? ['request_timeout', 'the request did not arrive within the time limit']
    : err.code === 'HPE_HEADER_OVERFLOW'
      ? ['headers_too_large', 'the request headers are larger than the limit']
      : ['invalid_request', 'the request is not valid HTTP']
  answerAndClose(socket, code, message)
}

/**
 * A CONNECT (a client taking the service for a proxy) never reaches Fastify: Node hands
 * over its connection, and closed it unanswered while nothing listened. It is answered
 * as any method on a path the service does not have, and the connection closed.
 */
export function connectHandler (request: IncomingMessage, socket: Duplex): void {
  answerAndClose(socket, 'route_not_found', `no route for CONNECT ${echo(request.url ?? '')}`)
}

// A connection with the answer Node is writing on it, if any: Node's own field (no public
// API says whether a connection has an answer under way). The answers to the requests
// after it wait in Node's queue, and each takes the field in turn.
type AnsweringSocket = Duplex & { _httpMessage?: ServerResponse | null }

// An answer written straight to a connection carries what every answer does: the security
// headers, and a request id (a fresh one: there was no request to take one from).
const DIRECT_HEADERS = Object.entries(apiSecurityHeaders).map(([name, value]) => `${name}: ${value}\r\n`).join('')

// Connections being refused: the parser reports its error again for every packet that
// follows, and each must not write another answer.
const refusing = new WeakSet<Duplex>()

/**
 * An Error written straight to a connection that no request or reply holds, which is then
 * closed. The requests that came whole before the refused bytes are answered first: each
 * may have changed the store, and its client must hear how (a create followed by bytes
 * that are not HTTP was stored, and its client got only the 400).
 */
function answerAndClose (socket: AnsweringSocket, code: ErrorCode, message: string): void {
  if (refusing.has(socket)) return
  refusing.add(socket)
  const answer = (): void => {
    const current = socket._httpMessage
    // A request still arriving (one too slow, say) is not waited for: it is what is refused.
    if (current?.req.complete === true) {
      current.once('close', answer)
      return
    }
    if (socket.writable && current?.headersSent !== true) {
      const status = ERROR_CODES[code].status
      const body = JSON.stringify(errorBody(code, message))
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${DIRECT_HEADERS}x-request-id: ${randomUUID()}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
    }
    socket.destroy()
  }
  answer()
}
