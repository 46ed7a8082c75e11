import { Type, type Static } from '@sinclair/typebox'
import type { ErrorHeader } from './headers.ts'
import { IDEMPOTENCY_ERROR_CODES } from './idempotency.ts'
import { PRECONDITION_ERROR_CODES } from './preconditions.ts'
import { EVENT_RETENTION_DAYS } from './webhook.ts'

/** One entry of ERROR_CODES. */
export interface ErrorEntry {
  status: number
  meaning: string
  example: string
  details?: ReadonlyArray<{ field: string, message: string }>
  /** The headers every answer with this code carries, besides those every answer does. */
  headers?: readonly ErrorHeader[]
}

/**
 * Every error cause: stable code, status, meaning, a real message (the example) and the
 * headers it carries. Clients tell causes apart by `code`, never by the message.
 */
export const ERROR_CODES = {
  invalid_request: {
    status: 400,
    meaning: 'The request is not valid HTTP (the connection is then closed), or its framing is not (a Content-Length that does not match the body). An HTTP/1.1 request without `Host` gets a 400 from Node itself, with no body.',
    example: 'the request is not valid HTTP'
  },
  invalid_path: {
    status: 400,
    meaning: 'The path is not valid percent-encoding, or a path parameter is longer than 100 characters.',
    example: 'a path parameter is longer than 100 characters'
  },
  invalid_json: {
    status: 400,
    meaning: 'The body is not valid JSON, or JSON the service refuses: a key twice in one object, a lone UTF-16 surrogate, a `__proto__` key, nesting too deep, or a fraction that would be read as an integer.',
    example: 'the body is not valid JSON: duplicate key "id" at position 9'
  },
  invalid_body: {
    status: 400,
    meaning: 'The body is JSON, but not the shape the operation takes: a field missing, of the wrong type, too long, or an id outside int64. `details` names each field.',
    example: 'body/id is required, body/name must be a string',
    details: [{ field: 'body/id', message: 'is required' }, { field: 'body/name', message: 'must be a string' }]
  },
  invalid_parameter: {
    status: 400,
    meaning: 'A path or query parameter is not valid. `details` names each parameter.',
    example: 'params/id must be an integer from -9223372036854775808 to 9223372036854775807',
    details: [{ field: 'params/id', message: 'must be an integer from -9223372036854775808 to 9223372036854775807' }]
  },
  unknown_parameter: {
    status: 400,
    meaning: 'A query parameter the operation does not take (a misspelt or unsupported one would otherwise be ignored silently). `details` names each.',
    example: 'GET /plants takes only limit, after, tag; unknown: page',
    details: [{ field: 'querystring/page', message: 'is not a parameter of this operation, which takes only limit, after, tag' }]
  },
  plant_rejected: {
    status: 400,
    meaning: 'The store cannot keep this plant.',
    example: 'the plant store cannot keep this plant'
  },
  webhook_url_refused: {
    status: 400,
    meaning: 'The webhook URL is not one the service delivers to: not https, port 0, or a host that does not resolve or is not a public address. The message says which, never the addresses a name resolves to.',
    example: 'the url must be https',
    details: [{ field: 'body/url', message: 'the url must be https' }]
  },
  token_missing: {
    status: 401,
    meaning: 'No `Authorization` header, or an empty one.',
    example: 'missing bearer token: send the header "Authorization: Bearer <token>"',
    headers: ['WWW-Authenticate']
  },
  authorization_malformed: {
    status: 401,
    meaning: 'The `Authorization` header is not `Bearer <token>`: no scheme, another scheme, or no token. Not counted as a guess.',
    example: 'the Authorization header is not a bearer token: send "Authorization: Bearer <token>"',
    headers: ['WWW-Authenticate']
  },
  token_invalid: {
    status: 401,
    meaning: 'The bearer token is not one the service accepts.',
    example: 'the bearer token is not valid',
    headers: ['WWW-Authenticate']
  },
  token_expired: {
    status: 401,
    meaning: 'The bearer token has expired.',
    example: 'the bearer token expired at 2026-11-01T00:00:00.000Z; ask for a new one',
    headers: ['WWW-Authenticate']
  },
  insufficient_scope: {
    status: 403,
    meaning: 'The bearer token is valid but lacks the scope this operation needs.',
    example: 'this token does not have the scope plants:write, which POST /plants needs; ask for a token with it',
    headers: ['WWW-Authenticate']
  },
  route_not_found: {
    status: 404,
    meaning: 'No route has this path.',
    example: 'no route for GET /plant'
  },
  plant_not_found: {
    status: 404,
    meaning: 'No plant has this id.',
    example: 'no plant has id 42'
  },
  webhook_not_found: {
    status: 404,
    meaning: 'No webhook subscription has this id.',
    example: 'no webhook subscription has id wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17'
  },
  delivery_not_found: {
    status: 404,
    meaning: 'The subscription has no delivery with this id.',
    example: 'subscription wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17 has no delivery with id 7'
  },
  method_not_allowed: {
    status: 405,
    meaning: 'The path exists, but not with this method; `Allow` lists the methods it has.',
    example: 'PATCH /plants/2 is not an operation of this API; the path takes DELETE, GET, HEAD, PUT'
  },
  request_timeout: {
    status: 408,
    meaning: 'The request did not arrive within the time limit. The connection is closed.',
    example: 'the request did not arrive within the time limit'
  },
  plant_conflict: {
    status: 409,
    meaning: 'A plant with this id already exists with a different name or tag.',
    example: 'a plant with id 1 already exists with a different name or tag'
  },
  subscription_limit: {
    status: 409,
    meaning: 'The store already keeps as many webhook subscriptions as it may.',
    example: 'there are already 20 webhook subscriptions, the most the store keeps; delete one first'
  },
  delivery_pending: {
    status: 409,
    meaning: 'The delivery is pending already; it cannot be retried.',
    example: 'delivery 7 is pending already: its next attempt is in the delivery log'
  },
  plant_deleted: {
    status: 409,
    meaning: 'The delivery\'s plant was deleted, and its data with it: there is nothing to send again.',
    example: 'the plant of delivery msg_2c7d9e1f3a5b4c6d8e0f1a2b3c4d5e6f was deleted: its data is no longer kept, so it is not sent again'
  },
  ...PRECONDITION_ERROR_CODES,
  cursor_expired: {
    status: 410,
    meaning: `The change feed no longer holds the events after this cursor: they were pruned (events are kept at least ${EVENT_RETENTION_DAYS} days), the store was moved or restored (its history restarted, and the cursor is from the earlier one), or the cursor is ahead of every event this store issued. Read the plants again from \`GET /plants\`, then follow the feed after the \`latest\` of a fresh page.`,
    example: 'the change feed no longer holds the events after cursor 12: it starts after 4096; read the plants again, then follow the feed from its latest'
  },
  body_too_large: {
    status: 413,
    meaning: 'The body is larger than BODY_LIMIT.',
    example: 'the body is larger than the limit of 16384 bytes'
  },
  unsupported_media_type: {
    status: 415,
    meaning: 'The body is not `application/json`.',
    example: 'Content-Type text/plain is not supported: send application/json'
  },
  rate_limited: {
    status: 429,
    meaning: 'More requests a second with this token than RATE_LIMIT_PER_TOKEN; retry after `Retry-After` seconds.',
    example: 'more than 50000 requests a second with this token',
    headers: ['Retry-After']
  },
  too_many_readers: {
    status: 429,
    meaning: 'This token already has CHANGES_MAX_READERS_PER_TOKEN change-feed requests waiting or streaming; end one, or retry after `Retry-After` seconds.',
    example: 'this token already has 8 change-feed requests waiting or streaming, the most it may; end one first',
    headers: ['Retry-After']
  },
  auth_locked_out: {
    status: 429,
    meaning: 'A wrong token from a client address that sent too many this minute (a valid one from it is served); retry after `Retry-After` seconds.',
    example: 'too many rejected tokens from this address; retry after the delay in Retry-After',
    headers: ['Retry-After']
  },
  headers_too_large: {
    status: 431,
    meaning: 'The request headers are larger than the limit. The connection is closed.',
    example: 'the request headers are larger than the limit'
  },
  internal_error: {
    status: 500,
    meaning: 'An unexpected error; the details are in the service log, never in the answer.',
    example: 'internal server error; the cause is in the service log'
  },
  store_unavailable: {
    status: 503,
    meaning: 'The store is unavailable (disk full, file locked, database unreachable); nothing was stored. Retry after `Retry-After` seconds.',
    example: 'the plant store is unavailable right now; retry after the delay in Retry-After',
    headers: ['Retry-After']
  },
  store_busy: {
    status: 503,
    meaning: 'Too many requests are waiting for the store (writes beyond the write queue\'s limit; on PostgreSQL, any request once every pooled connection has been in use for 2 s); nothing was stored. Retry after `Retry-After` seconds.',
    example: 'too many requests are waiting for the plant store; retry after the delay in Retry-After',
    headers: ['Retry-After']
  },
  overloaded: {
    status: 503,
    meaning: 'The service is overloaded (the event loop lags, the heap is nearly full, too many request bodies are arriving at once: the connection is then closed, or CHANGES_MAX_READERS change-feed requests are waiting or streaming already); retry after `Retry-After` seconds.',
    example: 'the service is overloaded right now; retry after the delay in Retry-After',
    headers: ['Retry-After']
  },
  shutting_down: {
    status: 503,
    meaning: 'The service is shutting down; retry, another instance will answer.',
    example: 'the service is shutting down; retry on another instance'
  },
  not_ready: {
    status: 503,
    meaning: 'A dependency the service needs (the store) is not available.',
    example: 'not ready: the store is unavailable'
  },
  ...IDEMPOTENCY_ERROR_CODES
} as const satisfies Record<string, ErrorEntry>

export type ErrorCode = keyof typeof ERROR_CODES

const codes = Object.keys(ERROR_CODES) as ErrorCode[]

const codeTable = codes.map((code) => `- \`${code}\` (${ERROR_CODES[code].status}): ${ERROR_CODES[code].meaning}`).join('\n')

export const ErrorDetail = Type.Object({
  field: Type.String({ description: 'Where the problem is: `body` or `body/<field>`, `params/<name>`, `querystring/<name>`' }),
  message: Type.String({ description: 'What is wrong with it' })
}, { description: 'One problem with one field or parameter' })

export const ErrorBody = Type.Object({
  error: Type.Integer({ format: 'int32', description: 'The HTTP status code of the response' }),
  message: Type.String({ description: 'What went wrong, in words a client developer can act on' }),
  code: Type.Unsafe<ErrorCode>(Type.String({
    enum: codes,
    description: `The cause, stable across versions: branch on this, not on the message.\n\n${codeTable}`
  })),
  details: Type.Optional(Type.Array(ErrorDetail, {
    description: 'On a 400 for a body or parameters that are not valid: one entry per problem'
  }))
}, { $id: 'Error', description: 'The body of every error response' })

export type ErrorDetail = Static<typeof ErrorDetail>
export type ErrorBody = Static<typeof ErrorBody>
