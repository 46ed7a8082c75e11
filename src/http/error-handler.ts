import type { FastifyError, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify'
import { ERROR_CODES, type ErrorBody, type ErrorCode, type ErrorDetail, type ErrorEntry } from '../../schemas/error.ts'
import { TargetInvalid } from './errors.ts'
import { isOriginForm } from './request-target.ts'
import { setAnswerHeaders } from './answer-headers.ts'

// No answer reflects more of the client's input than this many characters.
const MAX_ECHO = 100

// A full write queue drains in about a second, and an outage is probed twice in it.
const DEFAULT_RETRY_AFTER = '1'
const RETRY_AFTER_CODES = new Set((Object.keys(ERROR_CODES) as ErrorCode[]).filter((code) =>
  (ERROR_CODES[code] as ErrorEntry).headers?.includes('Retry-After') === true))

// Fastify's errors in the service's words: a public code, and a message that echoes little.
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

/** The one place a failure becomes an Error answer; anything unknown is a 500, logged. */
export function errorHandler (error: ServiceError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const code = codeOf(error)
  // Every other failure is intended, and its code is in the request's log line.
  if (code === 'internal_error') request.log.error({ err: error }, 'request failed')
  if (error.headers !== undefined) reply.headers(error.headers)
  // A code that promises Retry-After carries one, whoever threw it (the store's say none).
  if (RETRY_AFTER_CODES.has(code) && !reply.hasHeader('retry-after')) reply.header('retry-after', DEFAULT_RETRY_AFTER)
  const message = code === 'internal_error'
    ? 'internal server error; the cause is in the service log'
    : fromFastify[error.code]?.message(request) ?? error.message
  const details = error.details ?? detailsOf(error)
  reply.errorCode = code
  // A body refused before it was parsed (415, 413, cut off) holds nothing any more.
  request.server.releaseBody(request)
  const body = errorBody(code, message)
  return reply.code(body.error).send(details === undefined ? body : { ...body, details })
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

export function errorBody (code: ErrorCode, message: string): ErrorBody {
  return { error: ERROR_CODES[code].status, message, code }
}

export function echo (text: string): string {
  return text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}…` : text
}

/** Errors Fastify raises before any hook runs take the same path, with the answer headers. */
export function frameworkErrorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  setAnswerHeaders(request, reply)
  // The router refuses a target that is no path (`*health`) as a bad URL, before the request gate sees it.
  const notAPath = error.code === 'FST_ERR_BAD_URL' && !isOriginForm(request)
  errorHandler(notAPath ? new TargetInvalid() : error, request, reply)
}
