import fc from 'fast-check'
import type { FastifyInstance, HTTPMethods, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { AUTH, testApp } from './helpers/app.ts'
import { pointerSegment, type Json as Doc } from './helpers/document.ts'
import { errorShapeProblem } from './helpers/error-shape.ts'
import { hasBody, jsonOf, messageOf, violated } from './helpers/fuzz-answers.ts'
import { contractOf } from './helpers/fuzz-contract.ts'
import { anyRequest, bytesOf, createRequest, pathOf, strangerRequest, type FuzzRequest, type Method } from './helpers/fuzz-requests.ts'
import { fuzzSettings, propertyHolds } from './helpers/fuzz.ts'
import { int64Of, JsonNumber, newPlantOf, readJson } from './helpers/json-reference.ts'

// Property-based HTTP fuzzing through app.inject: the properties every answer must have,
// over generated hostile requests (bodies, paths, methods, query strings, header values,
// client addresses: helpers/fuzz-requests.ts and fuzz-text-bodies.ts). Seeded and
// reproducible: the seed is printed first, and FUZZ_SEED=<n> replays that run; FUZZ_RUNS=<n>
// sets the number of generated requests per property (npm run fuzz runs many more). A
// failure shows fast-check's shrunk counterexample. Each property has one app for all its
// requests, so an answer that reports on earlier requests (/metrics) depends on the whole
// run up to it.

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

// ---------------------------------------------------------------------------------
// Requests

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

// ---------------------------------------------------------------------------------
// The properties

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
