import { ErrorBody } from './error.js'
import { ref } from './ref.js'

// What each error status means, stated once for every route that can answer it.
const meanings = {
  400: 'The request is not valid: malformed, ambiguous (a key twice) or empty JSON, JSON past the limits of the parser on numbers, nesting or values (see Security in the README), a field or parameter of the wrong type or too long, an id outside int64, a path that is not valid percent-encoding, or a plant the store cannot keep. The message names the field and the rule.',
  401: 'The bearer token is missing, not accepted, or expired. The response carries `WWW-Authenticate: Bearer` (with `error="invalid_token"` for a token not accepted or expired).',
  403: 'The bearer token is valid but does not have the scope this operation needs (its security requirement). The response carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`.',
  404: 'No such route, or no plant with this id.',
  408: 'The request did not arrive within the time limits (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS). The connection is closed.',
  409: 'A plant with this id already exists with a different name or tag.',
  413: 'The body is larger than the limit (BODY_LIMIT, 1 MiB by default).',
  415: 'The body is not `application/json`.',
  431: 'The request headers are larger than the limit (16 KiB). The connection is closed.',
  429: 'Too many requests: more than RATE_LIMIT_PER_TOKEN a second with this token, or too many rejected tokens from this address. Retry after the `Retry-After` seconds.',
  500: 'Unexpected error. The details are in the service log, never in the response.',
  503: 'The service cannot serve the request now: the store is unavailable (disk full, file locked, database unreachable), too many writes are waiting for it (with `Retry-After`), the service is overloaded (with `Retry-After`), or it is shutting down. Nothing was stored; retry later.'
} as const

export type ErrorStatus = keyof typeof meanings

// Any request can meet these, whatever its route.
const everyRoute: ErrorStatus[] = [408, 431, 500]

/**
 * The `responses` entries for the error statuses a route can answer, each with the
 * Error body; a `[status, meaning]` pair words one status for this route. The statuses
 * any request can meet (408, 431, 500) are always included.
 */
export function errorResponses (...statuses: Array<ErrorStatus | [ErrorStatus, string]>) {
  const given = statuses.map((entry) => Array.isArray(entry) ? entry[0] : entry)
  const all = [...statuses, ...everyRoute.filter((status) => !given.includes(status))]
    .sort((a, b) => (Array.isArray(a) ? a[0] : a) - (Array.isArray(b) ? b[0] : b))
  return Object.fromEntries(all.map((entry) => {
    const [status, description] = Array.isArray(entry) ? entry : [entry, meanings[entry]]
    return [status, ref(ErrorBody, { description })]
  }))
}
