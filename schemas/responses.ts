import { ErrorBody } from './error.js'
import { ref } from './ref.js'

// What each error status means, stated once for every route that can answer it.
const meanings = {
  400: 'The request is not valid: malformed or empty JSON, a field or parameter of the wrong type, an id outside int64. The message names the field and the rule.',
  401: 'The bearer token is missing or not accepted. The response carries `WWW-Authenticate: Bearer`.',
  404: 'No such route, or no plant with this id.',
  409: 'A plant with this id already exists with a different name or tag.',
  413: 'The body is larger than the limit (BODY_LIMIT, 1 MiB by default).',
  415: 'The body is not `application/json`.',
  500: 'Unexpected error. The details are in the service log, never in the response.',
  503: 'The store cannot be used right now (disk full, file locked, database unreachable). Nothing was stored; retry later.'
} as const

export type ErrorStatus = keyof typeof meanings

/** The `responses` entries for the error statuses a route can answer, each with the Error body. */
export function errorResponses (...statuses: ErrorStatus[]) {
  return Object.fromEntries(statuses.map((status) => [status, ref(ErrorBody, { description: meanings[status] })]))
}
