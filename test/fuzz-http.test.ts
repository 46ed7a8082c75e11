import fc from 'fast-check'
import type { FastifyInstance, HTTPMethods, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { AUTH, TOKEN, testApp } from './helpers/app.ts'
import { pointerSegment, schemaChecker, type Json as Doc } from './helpers/document.ts'
import { errorShapeProblem } from './helpers/error-shape.ts'
import { fuzzSettings, propertyHolds } from './helpers/fuzz.ts'

// Property-based HTTP fuzzing through app.inject: generated hostile requests (bodies,
// paths, methods, query strings, header values, client addresses) and the properties
// every answer must have. Seeded and reproducible: the seed is printed first, and
// FUZZ_SEED=<n> replays that run; FUZZ_RUNS=<n> sets the number of generated requests
// per property (npm run fuzz runs many more). A failure shows fast-check's shrunk
// counterexample. Each property has one app for all its requests, so an answer that
// reports on earlier requests (/metrics) depends on the whole run up to it.

// About 3,000 requests in all, about 13 s with coverage on a 2-core machine.
const DEFAULT_RUNS = 600

const { seed, numRuns } = fuzzSettings(DEFAULT_RUNS)

// Limits this test does not exercise, switched off or out of reach, so that every answer
// is the service's answer to the request itself: no per-token rate, no lockout after
// rejected tokens, no overload checks (a 503 could only come from these or a shutdown).
const ENV = { RATE_LIMIT_PER_TOKEN: '0', AUTH_FAILURE_LIMIT: '1000000000', MAX_EVENT_LOOP_DELAY_MS: '0', MAX_HEAP_USED_PERCENT: '0' }

const MAX_BODY = 64 * 1024
// /metrics reports every (method, route, status) seen: a set bounded by the routes, the
// methods Node parses and the statuses the service answers (about 120 KB with all of them).
const MAX_METRICS = 512 * 1024
// The OpenAPI document is the same for every request, whatever it sends.
const DOCUMENTS = new Set(['/docs/json', '/docs/yaml'])
const MAX_DOCUMENT = 256 * 1024
const MAX_MESSAGE = 300
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

// ---------------------------------------------------------------------------------
// Requests

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const
type Method = typeof METHODS[number]

interface FuzzRequest {
  method: Method
  url: string
  headers: Record<string, string>
  payload?: string | Buffer
  remoteAddress: string
  /** Whether the Authorization header carries the valid token, by construction. */
  authorized: boolean
}

interface Auth { header?: string, valid: boolean }

/** Requests sent to the app of the property running now. */
let requestsSent = 0

async function send (app: FastifyInstance, req: FuzzRequest): Promise<LightMyRequestResponse> {
  requestsSent++
  return await app.inject({
    method: req.method as HTTPMethods,
    url: req.url,
    headers: req.headers,
    remoteAddress: req.remoteAddress,
    ...(req.payload === undefined ? {} : { payload: req.payload })
  })
}

/** The path the service sees: light-my-request resolves the URL as WHATWG URL does. */
function pathOf (url: string): string {
  return (url.startsWith('//') ? new URL(`http://localhost${url}`) : new URL(url, 'http://localhost')).pathname
}

function bytesOf (payload: string | Buffer | undefined): Buffer {
  return payload === undefined ? Buffer.alloc(0) : Buffer.isBuffer(payload) ? payload : Buffer.from(payload)
}

// ---------------------------------------------------------------------------------
// Generators: text

/** Characters an HTTP header value can carry: visible ASCII, space, tab, obs-text. */
const headerChar = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 1, arbitrary: fc.constant(0x09) },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) }
).map((c) => String.fromCharCode(c))
const headerText = (maxLength = 40) => fc.string({ unit: headerChar, maxLength })

/** Repeats a short unit: long texts that shrink to short ones. */
const repeated = (unit: fc.Arbitrary<string>, min: number, max: number) =>
  fc.tuple(unit, fc.integer({ min, max })).map(([text, times]) => text.repeat(times))

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c))
const codePoint = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })

/** Names and tags: any Unicode, control characters, lone surrogates, empty, and long ones around and past the limits. */
const unicodeText = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.string({ unit: fc.oneof(loneSurrogate, codePoint), maxLength: 6 }) },
  // around the tag (100) and name (1000) limits, counted in code points
  { weight: 1, arbitrary: repeated(codePoint, 95, 105) },
  { weight: 1, arbitrary: repeated(codePoint, 995, 1005) },
  // long: up to and past the 1 MiB body limit
  { weight: 1, arbitrary: repeated(fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }), 1000, 400_000) }
)

/** A JSON string literal: as JSON.stringify writes it, or with every UTF-16 unit as a \u escape. */
const jsonString = (text: fc.Arbitrary<string>) =>
  fc.tuple(text, fc.integer({ min: 0, max: 4 })).map(([value, how]) => how === 0 ? escapeAll(value) : JSON.stringify(value))

function escapeAll (text: string): string {
  let out = '"'
  for (let i = 0; i < text.length; i++) out += '\\u' + text.charCodeAt(i).toString(16).padStart(4, '0')
  return out + '"'
}

const jsonText = fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value))

// ---------------------------------------------------------------------------------
// Generators: bodies

/** JSON text for an id: integers, int64 edges, big integers as raw text, doubles, non-numbers. */
const idText = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -50, max: 300 }).map(String) },
  { weight: 2, arbitrary: fc.bigInt({ min: INT64_MIN - 5n, max: INT64_MAX + 5n }).map(String) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('9223372036854775807', '9223372036854775808', '-9223372036854775808',
      '-9223372036854775809', '18446744073709551616', '9007199254740992', '9007199254740993',
      '9007199254740993.0', '4503599627370496.5', '1e3', '1E3', '1e+3', '5.0', '5.00000000000000000001',
      '1.5', '-0', '0.0', '0e0', '1e-1', '10e-1', '1e400', '-1e400', '1e-400', '9.223372036854775807e18',
      '9.223372036854775808e18', '100000000000000000000000000', `1${'0'.repeat(400)}`, '01', '+1', '.5',
      '1.', '0x10', 'NaN', 'Infinity', '-')
  },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map(String) },
  { weight: 1, arbitrary: jsonString(fc.oneof(fc.integer().map(String), fc.string({ maxLength: 5 }))) },
  { weight: 1, arbitrary: fc.constantFrom('null', 'true', 'false', '{}', '[]', '[1]', '{"$numberLong":"1"}') }
)

/** JSON text for a name or tag: mostly strings, sometimes anything else. */
const textValue = fc.oneof(
  { weight: 8, arbitrary: jsonString(unicodeText) },
  { weight: 1, arbitrary: fc.constantFrom('null', 'true', '0', '123', '[]', '{}', '["a"]', '{"en":"x"}', '1e400') },
  { weight: 1, arbitrary: jsonText }
)

/** A key as JSON text, written plainly or as escapes ("n\u0061me" is "name"). */
const jsonKey = (key: string) => fc.oneof({ weight: 6, arbitrary: fc.constant(JSON.stringify(key)) }, { weight: 1, arbitrary: fc.constant(escapeAll(key)) })
const member = (key: string, value: fc.Arbitrary<string>) => fc.tuple(jsonKey(key), value).map(([k, v]) => `${k}:${v}`)

/** Members a client may add: unknown keys, prototype keys, near-miss keys, and duplicates of the real ones. */
const extraMember = fc.oneof(
  member('id', idText),
  member('name', textValue),
  member('tag', textValue),
  fc.tuple(jsonString(fc.string({ unit: 'binary', maxLength: 8 })), jsonText).map(([k, v]) => `${k}:${v}`),
  fc.constantFrom('"__proto__":{"x":1}', '"__proto__":null', '"constructor":{"prototype":{"x":1}}',
    '"constructor":1', '"prototype":1', '"ID":1', '"Name":"x"', '"id ":1', '"":0', '"\\u005f_proto__":{}')
)

/** An object shaped like a NewPlant with arbitrary fields, as raw JSON text (duplicate keys included). */
const plantText = fc.record({
  id: fc.option(member('id', idText), { freq: 10 }),
  name: fc.option(member('name', textValue), { freq: 10 }),
  tag: fc.option(member('tag', textValue), { freq: 2 }),
  extra: fc.array(fc.tuple(extraMember, fc.nat()), { maxLength: 3 }),
  space: fc.constantFrom('', '', '', ' ', '\n', '\t\r\n ')
}).map(({ id, name, tag, extra, space }) => {
  const members = [id, name, tag].filter((m) => m !== null)
  for (const [m, at] of extra) members.splice(at % (members.length + 1), 0, m)
  return `{${space}${members.join(`,${space}`)}${space}}`
})

// Names and tags within the limits, for plants that are created.
const plantName = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: repeated(codePoint, 95, 100) },
  { weight: 1, arbitrary: repeated(codePoint, 990, 1000) }
)
const plantTag = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: repeated(codePoint, 90, 100) }
)
const unknownKey = fc.string({ unit: 'binary', maxLength: 8 }).filter((key) => !['id', 'name', 'tag', '__proto__', 'constructor'].includes(key))
/** A well-formed NewPlant as JSON text, in its many spellings: most of these are created (or conflict). */
const wellFormedPlant = fc.record({
  id: member('id', fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: -50, max: 300 }).map(String) },
    { weight: 2, arbitrary: fc.bigInt({ min: INT64_MIN, max: INT64_MAX }).map(String) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('9223372036854775807', '-9223372036854775808', '9007199254740993', '1e3', '5.0', '-0',
        '0e0', '10e-1', '9.223372036854775807e18', '9007199254740993.0', '-9.223372036854775808E+18')
    }
  )),
  name: member('name', jsonString(plantName)),
  tag: fc.option(member('tag', jsonString(plantTag)), { freq: 2 }),
  extra: fc.array(fc.tuple(fc.tuple(jsonString(unknownKey), jsonText).map(([k, v]) => `${k}:${v}`), fc.nat()), { maxLength: 2 }),
  space: fc.constantFrom('', '', '', ' ', '\n', '\t\r\n ')
}).map(({ id, name, tag, extra, space }) => {
  const members = tag === null ? [id, name] : [id, name, tag]
  for (const [m, at] of extra) members.splice(at % (members.length + 1), 0, m)
  return `{${space}${members.join(`,${space}`)}${space}}`
})

// Byte sequences that matter to a JSON or UTF-8 decoder, as latin1 strings.
const TOKENS = ['"', '{', '}', '[', ']', ',', ':', '\\', '\\u', '\\ud800', '\\udc00', '\\ud83c\\udf3f', '0', '-',
  'e', '.', '\x00', ' ', '\x7f', '\xff', '\xc3', '\xed\xa0\x80', '\xf4\x90\x80\x80', '\xc0\xaf', '\xef\xbb\xbf',
  '9999999999999999999', '1e999', 'null', '"__proto__":', '/*', '\xe2\x80\xa8']

const edit = fc.record({
  kind: fc.constantFrom('insert', 'delete', 'replace', 'truncate'),
  at: fc.nat(),
  bytes: fc.oneof(
    fc.uint8Array({ minLength: 1, maxLength: 3 }).map((b) => Buffer.from(b)),
    fc.constantFrom(...TOKENS).map((s) => Buffer.from(s, 'latin1'))
  )
})

function applyEdit (text: Buffer, { kind, at, bytes }: { kind: string, at: number, bytes: Buffer }): Buffer {
  const i = at % (text.length + 1)
  switch (kind) {
    case 'insert': return Buffer.concat([text.subarray(0, i), bytes, text.subarray(i)])
    case 'delete': return Buffer.concat([text.subarray(0, i), text.subarray(i + bytes.length)])
    case 'replace': return Buffer.concat([text.subarray(0, i), bytes, text.subarray(i + bytes.length)])
    default: return text.subarray(0, i)
  }
}

/** Valid JSON text with random byte insertions, deletions, replacements and truncations. */
const nearJson = fc.tuple(fc.oneof(plantText, jsonText), fc.array(edit, { minLength: 1, maxLength: 4 }))
  .map(([text, edits]) => edits.reduce(applyEdit, Buffer.from(text)))

const body: fc.Arbitrary<string | Buffer> = fc.oneof(
  { weight: 3, arbitrary: wellFormedPlant },
  { weight: 6, arbitrary: plantText },
  { weight: 2, arbitrary: fc.jsonValue({ stringUnit: 'binary' }).map((value) => JSON.stringify(value)) },
  { weight: 4, arbitrary: nearJson },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\r\n', 'null', '{}', '[]', '""', '0', '\ufeff{}') }
)

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

const anyRequest = fc.oneof(bodyRequest(anyAuth), routeRequest(anyAuth))

/** Requests to /plants and /plants/<anything> without a valid token, mostly with bodies. */
const strangerRequest = fc.oneof(
  bodyRequest(invalidAuth),
  routeRequest(invalidAuth, fc.oneof(
    fc.constant('/plants'),
    idParam.map((id) => `/plants/${id}`),
    fc.array(segment, { minLength: 1, maxLength: 3 }).map((segments) => `/plants/${segments.join('/')}`)
  ), fc.option(body, { freq: 5 }))
)

/** Creates with the token and a JSON content type, mostly of well-formed plants. */
const createRequest = bodyRequest(validAuth, fc.constantFrom('application/json', 'application/json; charset=utf-8'),
  fc.oneof({ weight: 3, arbitrary: wellFormedPlant }, { weight: 2, arbitrary: body }))

// ---------------------------------------------------------------------------------
// A reference JSON reader, independent of the service's: exact number literals,
// duplicate keys resolved as JSON.parse does (the last one wins).

class JsonNumber {
  readonly literal: string
  constructor (literal: string) { this.literal = literal }
}
type Json = null | boolean | string | JsonNumber | Json[] | Map<string, Json>

class NotJson extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true })
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y

/** The JSON value of these bytes, or undefined when they are not UTF-8 JSON text (a BOM is allowed). */
function readJson (bytes: Buffer): Json | undefined {
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return undefined
  }
  let i = 0
  const space = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++ }
  const expect = (c: string) => { if (text[i] !== c) throw new NotJson(); i++ }
  const string = (): string => {
    expect('"')
    let out = ''
    for (;;) {
      const c = text[i++]
      if (c === undefined || c < ' ') throw new NotJson()
      if (c === '"') return out
      if (c !== '\\') { out += c; continue }
      const e = text[i++]
      const simple = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }[e ?? '']
      if (simple !== undefined) { out += simple; continue }
      if (e !== 'u' || !/^[0-9a-fA-F]{4}$/.test(text.slice(i, i + 4))) throw new NotJson()
      out += String.fromCharCode(parseInt(text.slice(i, i + 4), 16))
      i += 4
    }
  }
  const value = (): Json => {
    space()
    const c = text[i]
    let result: Json
    if (c === '{') {
      i++
      const object = new Map<string, Json>()
      space()
      if (text[i] === '}') i++
      else {
        for (;;) {
          space()
          const key = string()
          space()
          expect(':')
          object.set(key, value())
          space()
          if (text[i] === ',') { i++; continue }
          expect('}')
          break
        }
      }
      result = object
    } else if (c === '[') {
      i++
      const array: Json[] = []
      space()
      if (text[i] === ']') i++
      else {
        for (;;) {
          array.push(value())
          space()
          if (text[i] === ',') { i++; continue }
          expect(']')
          break
        }
      }
      result = array
    } else if (c === '"') {
      result = string()
    } else if (text.startsWith('true', i)) {
      i += 4; result = true
    } else if (text.startsWith('false', i)) {
      i += 5; result = false
    } else if (text.startsWith('null', i)) {
      i += 4; result = null
    } else {
      NUMBER.lastIndex = i
      const m = NUMBER.exec(text)
      if (m === null || m[0] === '' || m[0] === '-') throw new NotJson()
      i += m[0].length
      result = new JsonNumber(m[0])
    }
    space()
    return result
  }
  try {
    const result = value()
    if (i !== text.length) return undefined
    return result
  } catch (err) {
    if (err instanceof NotJson) return undefined
    throw err
  }
}

/** The int64 a number literal denotes exactly (1e3 and 5.0 do), or undefined. */
function int64Of (literal: string): bigint | undefined {
  const [, sign, whole, fraction = '', exponent = '0'] = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal)!
  const digits = (whole + fraction).replace(/^0+/, '')
  if (digits === '') return 0n
  const significant = digits.replace(/0+$/, '')
  const scale = BigInt(exponent) - BigInt(fraction.length) + BigInt(digits.length - significant.length)
  if (scale < 0n || BigInt(significant.length) + scale > 20n) return undefined
  const value = BigInt(sign + significant + '0'.repeat(Number(scale)))
  return value >= INT64_MIN && value <= INT64_MAX ? value : undefined
}

interface SentPlant { id: bigint, name: string, tag?: string }

/** The NewPlant these bytes denote, by the README's rules, or undefined when they are not one. */
function newPlantOf (bytes: Buffer): SentPlant | undefined {
  const value = readJson(bytes)
  if (!(value instanceof Map)) return undefined
  const id = value.get('id')
  const name = value.get('name')
  const tag = value.get('tag')
  if (!(id instanceof JsonNumber) || typeof name !== 'string' || !name.isWellFormed()) return undefined
  if (tag !== undefined && (typeof tag !== 'string' || !tag.isWellFormed())) return undefined
  const exact = int64Of(id.literal)
  if (exact === undefined) return undefined
  return { id: exact, name, ...(tag === undefined ? {} : { tag }) }
}

// ---------------------------------------------------------------------------------
// The properties

class Violation extends Error {}

function violated (res: LightMyRequestResponse, why: string): never {
  const body = res.body.length > 300 ? `${res.body.slice(0, 300)}… (${res.body.length} characters)` : res.body
  throw new Violation(`${why}; the answer: ${res.statusCode} ${body}`)
}

/** The answer's body as JSON, or undefined when it is not JSON. */
function jsonOf (res: LightMyRequestResponse): unknown {
  try {
    return JSON.parse(res.body)
  } catch {
    return undefined
  }
}

function messageOf (res: LightMyRequestResponse): unknown {
  return (jsonOf(res) as { message?: unknown } | null | undefined)?.message
}

function hasBody (req: FuzzRequest, res: LightMyRequestResponse): boolean {
  return req.method !== 'HEAD' && res.statusCode !== 204 && res.statusCode !== 304
}

/** 1. No 5xx: the memory store never fails, and nothing here overloads or closes the app. */
function noServerError (_req: FuzzRequest, res: LightMyRequestResponse): void {
  if (res.statusCode >= 500) violated(res, 'a 5xx answer')
}

/** 2. Errors are exactly the Error shape, as JSON, a 405's Allow never naming the method asked (RFC 9110); every answer has its request id and nosniff. */
function errorShape (req: FuzzRequest, res: LightMyRequestResponse): void {
  const id = res.headers['x-request-id']
  if (typeof id !== 'string' || !UUID.test(id)) violated(res, `x-request-id is ${JSON.stringify(id)}, not a fresh UUID`)
  if (res.headers['x-content-type-options'] !== 'nosniff') violated(res, 'no x-content-type-options: nosniff')
  if (res.statusCode < 400) return
  if (res.statusCode === 405 && String(res.headers.allow).split(', ').includes(req.method)) violated(res, `a 405 to ${req.method} whose Allow names it`)
  const problem = errorShapeProblem(res.statusCode, String(res.headers['content-type'] ?? ''), hasBody(req, res) ? res.body : undefined)
  if (problem !== undefined) violated(res, problem)
}

/** 3. Answers are bounded: no answer but a list page exceeds 64 KiB (/metrics 512 KiB, the OpenAPI document 256 KiB), no error message 300 characters. */
function bounded (req: FuzzRequest, res: LightMyRequestResponse): void {
  const read = res.statusCode === 200 && (req.method === 'GET' || req.method === 'HEAD')
  // The router ignores one trailing slash.
  const path = pathOf(req.url).replace(/(.)\/$/, '$1')
  const listPage = read && path === '/plants'
  const limit = !read ? MAX_BODY : path === '/metrics' ? MAX_METRICS : DOCUMENTS.has(path) ? MAX_DOCUMENT : MAX_BODY
  if (!listPage && res.rawPayload.length > limit) {
    // An answer about earlier requests (/metrics) depends on the whole run, not only on this request.
    violated(res, `a body of ${res.rawPayload.length} bytes, after ${requestsSent} requests to this app`)
  }
  if (res.statusCode >= 400 && hasBody(req, res)) {
    const message = messageOf(res) // not JSON: errorShape reports it
    if (typeof message === 'string' && message.length > MAX_MESSAGE) violated(res, `an error message of ${message.length} characters`)
  }
}

/** Whether the service has a route for this method and path (undefined: not predicted). */
function methodsOf (path: string): Method[] | undefined {
  // The router ignores one trailing slash.
  const routedPath = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
  if (routedPath === '/plants') return ['GET', 'HEAD', 'POST']
  if (routedPath === '/plants/') return undefined
  if (/^\/plants\/[^/]+$/.test(routedPath)) {
    // An id past the router's 100 characters matches no route: another method's answer may say either.
    return routedPath.length - '/plants/'.length > 100 ? undefined : ['DELETE', 'GET', 'HEAD', 'PUT']
  }
  return []
}

// A path that cannot be routed at all is refused by the router, before any route's hooks,
// for everyone alike: no body is read for it either.
const UNROUTABLE = new Set(['the path is not valid percent-encoding', 'a path parameter is longer than 100 characters'])

/** 4. A stranger to /plants or /plants/<anything> gets 401 (or 429, 404 where no route is, 405 with Allow where the path has other methods, or 400 for a path that cannot be routed): never a body read. */
function strangerRefused (req: FuzzRequest, res: LightMyRequestResponse): void {
  if (req.authorized) throw new Error('the generator gave a stranger the token')
  const path = pathOf(req.url)
  if (path !== '/plants' && !path.startsWith('/plants/')) return
  const status = res.statusCode
  if (status === 401 || status === 429) return
  // A HEAD answer has no body to say why: for a stranger only the router answers 400.
  if (status === 400 && (req.method === 'HEAD' || UNROUTABLE.has(String(messageOf(res))))) return
  const methods = methodsOf(path)
  if (status === 404) {
    if (methods?.length === 0) return
    if (methods === undefined && (req.method === 'HEAD' || /^no route for /.test(String(messageOf(res))))) return
    violated(res, `a stranger got a 404 from ${req.method} ${path}, which ${methods === undefined ? 'is not answered as having no route' : 'has a route'}`)
  }
  if (status === 405) {
    const allow = res.headers.allow
    if (methods === undefined && typeof allow === 'string') return
    if (methods !== undefined && methods.length > 0 && !methods.includes(req.method) && allow === methods.join(', ')) return
    violated(res, `a stranger got a 405 from ${req.method} ${path} with Allow: ${String(allow)}`)
  }
  violated(res, `a stranger got ${status} from ${req.method} ${path}: not refused before the request was read`)
}

/** 5. A 200 to POST /plants is exactly the {name, tag?} sent, and GET /plants/<id> then answers it. */
async function createdAsSent (app: FastifyInstance, req: FuzzRequest, res: LightMyRequestResponse): Promise<void> {
  if (res.statusCode !== 200) return
  const sent = newPlantOf(bytesOf(req.payload))
  if (sent === undefined) violated(res, 'a 200 to a body that is not a NewPlant (UTF-8 JSON, int64 id, well-formed string name and tag)')
  const expected = JSON.stringify({ name: sent.name, ...(sent.tag === undefined ? {} : { tag: sent.tag }) })
  const answer = jsonOf(res) as Record<string, unknown> | null | undefined
  const keys = sent.tag === undefined ? 'name' : 'name,tag'
  if (typeof answer !== 'object' || answer === null || Object.keys(answer).sort().join(',') !== keys ||
    answer.name !== sent.name || answer.tag !== sent.tag) {
    violated(res, `a 200 that is not exactly ${expected}`)
  }
  const got = await app.inject({ url: `/plants/${sent.id}`, headers: AUTH })
  const stored = got.statusCode === 200 ? readJson(got.rawPayload) : undefined
  const same = stored instanceof Map && [...stored.keys()].sort().join(',') === (sent.tag === undefined ? 'id,name' : 'id,name,tag') &&
    stored.get('id') instanceof JsonNumber && int64Of((stored.get('id') as JsonNumber).literal) === sent.id &&
    stored.get('name') === sent.name && stored.get('tag') === sent.tag
  if (!same) violated(got, `GET /plants/${sent.id} after the 200 does not answer the plant ${expected} with its id`)
}

/** The document's paths, as a contract checker reads them: each template's operations and a checker of its answers' bodies. */
interface Contract {
  paths: Array<{ template: string, pattern: RegExp, operations: Doc }>
  check: (pointer: string) => (value: unknown) => boolean
}

const contracts = new WeakMap<FastifyInstance, Contract>()

async function contractOf (app: FastifyInstance): Promise<Contract> {
  const known = contracts.get(app)
  if (known !== undefined) return known
  const doc = (await app.inject({ url: '/docs/json' })).json()
  const paths = Object.entries<Doc>(doc.paths).map(([template, operations]) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    operations
  }))
  // JSON.parse reads an id beyond 2^53 inexactly, but still as an integer within int64's range.
  const checker = schemaChecker(doc, (value) => Number.isInteger(value) && Math.abs(value) <= 2 ** 63)
  const checks = new Map<string, (value: unknown) => boolean>()
  const contract = {
    paths,
    check: (pointer: string) => {
      if (!checks.has(pointer)) checks.set(pointer, checker(pointer))
      return checks.get(pointer)!
    }
  }
  contracts.set(app, contract)
  return contract
}

// Answers to a method no operation has on the path, by status: the router's, which no
// operation declares (a path it cannot route answers before the method is looked at).
const PATH_LEVEL = new Map([[400, 'invalid_path'], [404, 'route_not_found'], [405, 'method_not_allowed']])

/** 6. An answer to a path of the document is one it declares for the operation: the status, a code listed for it, a JSON body of its schema. */
async function declared (app: FastifyInstance, req: FuzzRequest, res: LightMyRequestResponse): Promise<void> {
  const contract = await contractOf(app)
  // The router ignores one trailing slash.
  const path = pathOf(req.url).replace(/(.)\/$/, '$1')
  const at = contract.paths.find(({ pattern }) => pattern.test(path))
  if (at === undefined) return
  // A HEAD is answered as its GET, without the body.
  const method = req.method === 'HEAD' ? 'get' : req.method.toLowerCase()
  const operation: Doc | undefined = at.operations[method]
  const code = hasBody(req, res) ? (jsonOf(res) as { code?: unknown } | undefined)?.code : undefined
  if (operation === undefined) {
    const expected = PATH_LEVEL.get(res.statusCode)
    // A HEAD answer has no body to tell its code.
    if (expected === undefined || (code !== expected && hasBody(req, res))) {
      violated(res, `${req.method} ${at.template}, which the document does not have, answered other than the router's 405 (400 or 404 for a path it cannot route)`)
    }
    // Allow names the document's methods for the path, and HEAD with a GET.
    const methods = Object.keys(at.operations).map((m) => m.toUpperCase())
    const allow = [...methods, ...methods.includes('GET') ? ['HEAD'] : []].sort().join(', ')
    if (res.statusCode === 405 && res.headers.allow !== allow) violated(res, `a 405 from ${at.template} with Allow: ${String(res.headers.allow)}, not ${allow}`)
    return
  }
  const status = String(res.statusCode)
  const response: Doc | undefined = operation.responses[status]
  if (response === undefined) violated(res, `${req.method} ${at.template} declares no ${status}`)
  if (!hasBody(req, res)) return
  const media: Doc | undefined = response.content?.['application/json']
  if (media === undefined) {
    if (String(res.headers['content-type']).startsWith('application/json')) violated(res, `${req.method} ${at.template} declares no JSON body for ${status}`)
    return
  }
  if (res.statusCode >= 400 && !Object.hasOwn(media.examples, String(code))) {
    violated(res, `${req.method} ${at.template} declares ${status} without the code ${String(code)}`)
  }
  const valid = contract.check(`/paths/${pointerSegment(at.template)}/${method}/responses/${status}/content/application~1json/schema`)
  if (!valid(jsonOf(res))) violated(res, `the body is not the ${status} schema of ${req.method} ${at.template}`)
}

/**
 * Runs property `n` over generated requests, all answered by one app, and reports it to
 * tap. Each property draws its own requests, from the seed FUZZ_SEED + n.
 */
async function holds (
  t: Test,
  n: number,
  requests: fc.Arbitrary<FuzzRequest>,
  check: (app: FastifyInstance, req: FuzzRequest, res: LightMyRequestResponse) => void | Promise<void>
): Promise<void> {
  const app = await testApp(t, ENV)
  requestsSent = 0
  const property = fc.asyncProperty(requests, async (req) => {
    await check(app, req, await send(app, req))
  })
  await propertyHolds(t, property, (seed + n) | 0, numRuns, seed)
}

// Long runs (npm run fuzz) get the time they need: at most 10 ms a request.
t.setTimeout(Math.max(180_000, 5 * numRuns * 10))

t.test('1. no generated request gets a 5xx answer', async (t) => {
  await holds(t, 1, anyRequest, (_app, req, res) => noServerError(req, res))
})

t.test('2. every answer carries x-request-id and nosniff; every error is exactly {error: <status>, message, code (of that status), details?} as application/json, and a 405 never names the method asked in Allow', async (t) => {
  await holds(t, 2, anyRequest, (_app, req, res) => errorShape(req, res))
})

t.test('3. answers are bounded: at most 64 KiB unless a successful list page (/metrics: 512 KiB, the OpenAPI document: 256 KiB), error messages at most 300 characters', async (t) => {
  await holds(t, 3, anyRequest, (_app, req, res) => bounded(req, res))
})

t.test('4. without a valid token, /plants and /plants/<anything> answer only 401, 429, 404 where no route is, 405 with Allow where the path has other methods, or 400 for a path that cannot be routed: never a body read', async (t) => {
  await holds(t, 4, strangerRequest, (_app, req, res) => strangerRefused(req, res))
})

t.test('5. a POST /plants answered 200 returns exactly the {name, tag?} sent, and GET /plants/<id> then returns that plant', async (t) => {
  await holds(t, 5, createRequest, async (app, req, res) => await createdAsSent(app, req, res))
})

t.test('6. an answer to a path of the document is one the document declares for the operation: a status it lists (405 with the path\'s methods in Allow where the path has no such method), a code its examples list for that status, a JSON body that matches its schema', async (t) => {
  await holds(t, 6, anyRequest, async (app, req, res) => await declared(app, req, res))
})
