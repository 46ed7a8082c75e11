import { ERROR_CODES, ErrorBody, type ErrorCode, type ErrorEntry } from './error.ts'
import { always, ERROR_HEADERS, sentWith, type ErrorHeader } from './headers.ts'
import { ref } from './ref.ts'

// The catalogue, each entry seen with the fields any may have.
const catalogue: Record<ErrorCode, ErrorEntry> = ERROR_CODES

// Every operation can meet these, whatever its route: a request that is not HTTP or
// is too slow or too large, and a bug.
const everyRequest: ErrorCode[] = ['invalid_request', 'request_timeout', 'headers_too_large', 'internal_error']

/** What every operation behind the bearer token can answer before its handler runs. */
export const GUARDED: ErrorCode[] = [
  'unknown_parameter', 'token_missing', 'authorization_malformed', 'token_invalid', 'token_expired',
  'insufficient_scope', 'rate_limited', 'auth_locked_out', 'overloaded', 'shutting_down'
]

/** What a POST that takes no body can answer for one sent anyway: it is read as JSON, then ignored. */
export const IGNORED_BODY: ErrorCode[] = ['invalid_json', 'body_too_large', 'unsupported_media_type']

/** What an operation that takes a JSON body can answer for it. */
export const JSON_BODY: ErrorCode[] = [...IGNORED_BODY, 'invalid_body']

/** What an operation with path parameters can answer for them. */
export const PATH_PARAMETERS: ErrorCode[] = ['invalid_path', 'invalid_parameter']

const headings: Record<number, string> = {
  400: 'The request is not valid',
  401: 'No bearer token, or not one the service accepts; the answer carries a `WWW-Authenticate: Bearer` challenge',
  403: 'The token lacks the scope this operation needs; the answer carries `WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`',
  404: 'Not found',
  408: 'Too slow',
  409: 'In conflict with what the store holds',
  410: 'No longer available',
  413: 'Too large',
  415: 'Not JSON',
  422: 'Not the request this `Idempotency-Key` was first used for',
  429: 'Too many requests; retry after the `Retry-After` seconds',
  431: 'Headers too large',
  500: 'Unexpected error',
  503: 'Cannot serve now; nothing was stored'
}

/**
 * `responses` for an operation's error codes, one per status with their examples and
 * headers; the codes any request can meet are always included.
 */
export function errorResponses (...codes: Array<ErrorCode | ErrorCode[]>) {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of new Set([...codes.flat(), ...everyRequest])) {
    const { status } = ERROR_CODES[code]
    byStatus.set(status, [...byStatus.get(status) ?? [], code])
  }
  return Object.fromEntries([...byStatus].sort(([a], [b]) => a - b).map(([status, those]) => {
    // Each code's meaning is stated once, in the Error schema's `code` and in its example.
    const description = `${headings[status]}. Codes: ${those.map((code) => `\`${code}\``).join(', ')}.`
    const examples = Object.fromEntries(those.map((code) => [code, { $ref: `#/components/examples/${code}` }]))
    return [status, { description, ...headersOf(those), content: { 'application/json': { schema: ref(ErrorBody), examples } } }]
  }))
}

/** The headers the answers with these codes carry: required where every one of them does. */
function headersOf (codes: ErrorCode[]) {
  const carried = (code: ErrorCode): readonly ErrorHeader[] => catalogue[code].headers ?? []
  const names = [...new Set(codes.flatMap(carried))]
  if (names.length === 0) return {}
  return {
    headers: Object.fromEntries(names.map((name) => {
      const carriers = codes.filter((code) => carried(code).includes(name))
      return [name, carriers.length === codes.length ? always(ERROR_HEADERS[name]) : sentWith(ERROR_HEADERS[name], carriers)]
    }))
  }
}

// Answers to a path or method no operation has: in the `code` enum, in no operation's responses.
const noOperation = new Set<string>(['route_not_found', 'method_not_allowed'])

/** The document's `components.examples`: one real Error per code an operation can answer. */
export function errorExamples () {
  const answered = Object.entries(catalogue).filter(([code]) => !noOperation.has(code))
  return Object.fromEntries(answered.map(([code, { status, meaning, example, headers, ...rest }]) => [code, {
    summary: meaning.split(/(?<=\.) /, 1)[0],
    value: { error: status, message: example, code, ...rest }
  }]))
}
