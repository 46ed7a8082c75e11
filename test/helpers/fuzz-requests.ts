import fc from 'fast-check'
import { TOKEN } from './app.ts'
import { body, headerText, repeated, wellFormedPlant } from './fuzz-text-bodies.ts'

// Generators of whole hostile requests for the HTTP fuzz test: methods, paths, query
// strings, header values and client addresses, around the bodies of fuzz-text-bodies.ts.

// ---------------------------------------------------------------------------------
// Requests

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const
export type Method = typeof METHODS[number]

export interface FuzzRequest {
  method: Method
  url: string
  headers: Record<string, string>
  payload?: string | Buffer
  remoteAddress: string
  /** Whether the Authorization header carries the valid token, by construction. */
  authorized: boolean
}

interface Auth { header?: string, valid: boolean }

/** The path the service sees: light-my-request resolves the URL as WHATWG URL does. */
export function pathOf (url: string): string {
  return (url.startsWith('//') ? new URL(`http://localhost${url}`) : new URL(url, 'http://localhost')).pathname
}

export function bytesOf (payload: string | Buffer | undefined): Buffer {
  return payload === undefined ? Buffer.alloc(0) : Buffer.isBuffer(payload) ? payload : Buffer.from(payload)
}

// ---------------------------------------------------------------------------------
// Generators: headers and client addresses

const validAuth: fc.Arbitrary<Auth> = fc.tuple(fc.mixedCase(fc.constant('bearer')), fc.constantFrom('', ' ', '\t'), fc.constantFrom('', ' ', '  '))
  .map(([scheme, before, after]) => ({ header: `${scheme} ${before}${TOKEN}${after}`, valid: true }))

const invalidAuth: fc.Arbitrary<Auth> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Auth>({ valid: false }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom('', 'Bearer', 'Bearer ', 'bearer', 'Basic dXNlcjpwYXNzd29yZA==', `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`, `Bearer ${TOKEN},Bearer ${TOKEN}`, `Bearer x ${TOKEN}`, `Bearer "${TOKEN}"`,
      `Bearer${TOKEN}`, TOKEN, `Token ${TOKEN}`, `Bearer\t${TOKEN}`, `Bearer ${TOKEN.toUpperCase()}`)
      .map((header) => ({ header, valid: false }))
  },
  { weight: 3, arbitrary: headerText().map((token) => ({ header: `Bearer ${token}`, valid: false })) },
  {
    weight: 2,
    arbitrary: fc.stringMatching(/^[A-Za-z][\w!#$%&'*+.^`|~-]{0,12}$/)
      .filter((scheme) => scheme.toLowerCase() !== 'bearer')
      .map((scheme) => ({ header: `${scheme} ${TOKEN}`, valid: false }))
  },
  { weight: 1, arbitrary: repeated(fc.constantFrom('A', 'a=', TOKEN), 100, 20_000).map((token) => ({ header: `Bearer ${token}`, valid: false })) },
  { weight: 1, arbitrary: headerText().map((header) => ({ header, valid: false })) }
).filter(({ header }) => header === undefined || !(header.slice(0, 7).toLowerCase() === 'bearer ' && header.slice(7).trim() === TOKEN))

const anyAuth = fc.oneof(validAuth, invalidAuth)

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(undefined, 'text/plain', '', 'APPLICATION/JSON', 'Application/Json; Charset=UTF-8',
      'application/json;charset=UTF-8', 'application/json; charset=iso-8859-1', 'application/json; charset="utf-8"',
      'application/json ; charset=utf-8', 'application/json; charset=utf-8; charset=latin1', 'application/jsonp',
      'application/json-patch+json', 'application/problem+json', 'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x', 'application/xml', 'text/json', ';', '/', 'application/json, text/plain',
      ' application/json', 'application/json\t', 'application/json; x', `application/json; ${'a'.repeat(5000)}`)
  },
  { weight: 2, arbitrary: headerText() }
)

const remoteAddress = fc.oneof(fc.ipV4(), fc.ipV6())

const requestId = fc.oneof(fc.uuid(), fc.stringMatching(/^[\w.:-]{1,128}$/), headerText(), repeated(fc.constant('x'), 129, 10_000))

const forwardedFor = fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), headerText(20)), { minLength: 1, maxLength: 4 })
  .map((addresses) => addresses.join(', '))

/** The headers of a request, leaving out the ones given as undefined. */
function headersOf (entries: Record<string, string | undefined | null>): Record<string, string> {
  return Object.fromEntries(Object.entries(entries).filter((entry): entry is [string, string] => typeof entry[1] === 'string'))
}

// ---------------------------------------------------------------------------------
// Generators: paths and query strings

const pathChar = fc.constantFrom(...'abcxyzABC019-._~!$&\'()*+,;=:@')
const queryChar = fc.constantFrom(...'abcxyzABC019-._~!$\'()*+,;:@/?[]')
const percentGarbage = fc.constantFrom('%', '%z', '%zz', '%00', '%0', '%ff', '%e9', '%c3%28', '%ed%a0%80',
  '%f4%90%80%80', '%c0%af', '%2F', '%2f', '%5C', '%2e%2e', '%25', '%u0041', '%%', '%0a', '%0d%0a', '%23', '%3F')

const segment = fc.array(fc.oneof(
  fc.string({ unit: pathChar, minLength: 1, maxLength: 10 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }).map(encodeURIComponent),
  percentGarbage,
  fc.webSegment()
), { maxLength: 3 }).map((pieces) => pieces.join(''))

/** The text of a /plants/{id} parameter. */
const idParam = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: -50, max: 300 }).map(String) },
  { weight: 2, arbitrary: fc.bigInt({ min: -(2n ** 66n), max: 2n ** 66n }).map(String) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('9223372036854775807', '9223372036854775808', '-9223372036854775808',
      '-9223372036854775809', '0', '-0', '00', '+1', '1.5', '1e3', '%201', '0x10', 'abc', '__proto__',
      'constructor', 'hasOwnProperty', 'NaN', 'Infinity', '%zz', '%00', '%', '%ff', '1%00', '1;x', '1,2', '..', '.')
  },
  { weight: 3, arbitrary: segment },
  { weight: 1, arbitrary: repeated(fc.constantFrom('1', 'a', '%41', '%zz', '%e9'), 90, 3000) }
)

/** A subscription's or delivery's id: well-formed (and unknown) or anything an id parameter can be. */
const webhookId = (prefix: string) => fc.oneof(
  { weight: 2, arbitrary: fc.stringMatching(/^[0-9a-f]{32}$/).map((hex) => `${prefix}${hex}`) },
  { weight: 1, arbitrary: idParam }
)

/** The subscription routes' paths, with or without their parts. */
const webhookPath = fc.tuple(webhookId('wh_'), webhookId('msg_'), fc.integer({ min: 0, max: 3 }))
  .map(([id, deliveryId, depth]) => ['/webhooks', `/webhooks/${id}`, `/webhooks/${id}/deliveries`, `/webhooks/${id}/deliveries/${deliveryId}/retry`][depth])

const path = fc.oneof(
  { weight: 3, arbitrary: fc.constant('/plants') },
  { weight: 2, arbitrary: webhookPath },
  { weight: 6, arbitrary: idParam.map((id) => `/plants/${id}`) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('/health', '/health/ready', '/metrics', '/docs/json', '/docs/yaml', '/docs', '/',
      '/plants/', '/plants//1', '//plants', '/PLANTS', '/plants/1/', '/plants/1/x', '/health/', '/metrics/',
      '/docs/static/nope.js', '/plants%2F1', '/plants/.', '/plants/%2e%2e')
  },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom('', '/plants', '/plants/1', '/health', '/docs', '/docs/static', '/metrics'),
      fc.array(segment, { minLength: 1, maxLength: 4 }))
      .map(([prefix, segments]) => `${prefix}/${segments.join('/')}`)
  }
)

const queryPart = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: queryChar, maxLength: 10 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }).map(encodeURIComponent) },
  { weight: 2, arbitrary: percentGarbage },
  { weight: 1, arbitrary: repeated(fc.constantFrom('a', '1', '%41', '%zz', '%', '%e9'), 100, 20_000) }
)

const queryKey = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('limit', 'after', 'tag') },
  {
    weight: 2,
    arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf',
      'limit[]', 'tag[0]', '__proto__[limit]', 'constructor[prototype][x]', 'LIMIT', '', 'a.b', 'limit%00')
  },
  { weight: 2, arbitrary: queryPart }
)

const queryValue = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: -5, max: 1005 }).map(String) },
  { weight: 2, arbitrary: fc.bigInt({ min: -(2n ** 66n), max: 2n ** 66n }).map(String) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('', '0', '1', '1000', '1001', '1.5', '1e3', '+5', '%205', '0x10', 'NaN', '-0',
      '00001', '9223372036854775807', '9223372036854775808', '-9223372036854775809', 'true', 'null', '[]')
  },
  { weight: 3, arbitrary: queryPart }
)

const query = fc.array(fc.tuple(queryKey, fc.option(queryValue, { freq: 8 })), { maxLength: 5 })
  .map((pairs) => pairs.length === 0 ? '' : '?' + pairs.map(([key, value]) => value === null ? key : `${key}=${value}`).join('&'))

// ---------------------------------------------------------------------------------
// Generators: whole requests

/** POST /plants with a fuzzed body and content type. */
const bodyRequest = (auth: fc.Arbitrary<Auth>, types = contentType, bodies = body): fc.Arbitrary<FuzzRequest> => fc.record({
  auth,
  type: types,
  payload: bodies,
  url: fc.oneof({ weight: 6, arbitrary: fc.constant('/plants') }, { weight: 1, arbitrary: query.map((q) => `/plants${q}`) }),
  remoteAddress
}).map(({ auth, type, payload, url, remoteAddress }) => ({
  method: 'POST',
  url,
  headers: headersOf({ authorization: auth.header, 'content-type': type }),
  payload,
  remoteAddress,
  authorized: auth.valid
}))

/** Any method, path and query string, with fuzzed header values and sometimes a body. */
const routeRequest = (auth: fc.Arbitrary<Auth>, paths = path, payloads = fc.option(body, { freq: 3 })): fc.Arbitrary<FuzzRequest> => fc.record({
  method: fc.constantFrom(...METHODS),
  path: paths,
  query,
  auth,
  type: fc.option(contentType, { freq: 2 }),
  requestId: fc.option(requestId, { freq: 2 }),
  forwardedFor: fc.option(forwardedFor, { freq: 2 }),
  payload: payloads,
  remoteAddress
}).map(({ method, path, query, auth, type, requestId, forwardedFor, payload, remoteAddress }) => ({
  method,
  url: path + query,
  headers: headersOf({
    authorization: auth.header,
    'content-type': type,
    'x-request-id': requestId,
    'x-forwarded-for': forwardedFor
  }),
  ...(payload === null ? {} : { payload }),
  remoteAddress,
  authorized: auth.valid
}))

export const anyRequest = fc.oneof(bodyRequest(anyAuth), routeRequest(anyAuth))

/** Requests to /plants and /plants/<anything> without a valid token, mostly with bodies. */
export const strangerRequest = fc.oneof(
  bodyRequest(invalidAuth),
  routeRequest(invalidAuth, fc.oneof(
    fc.constant('/plants'),
    idParam.map((id) => `/plants/${id}`),
    fc.array(segment, { minLength: 1, maxLength: 3 }).map((segments) => `/plants/${segments.join('/')}`)
  ), fc.option(body, { freq: 5 }))
)

/** Creates with the token and a JSON content type, mostly of well-formed plants. */
export const createRequest = bodyRequest(validAuth, fc.constantFrom('application/json', 'application/json; charset=utf-8'),
  fc.oneof({ weight: 3, arbitrary: wellFormedPlant }, { weight: 2, arbitrary: body }))
