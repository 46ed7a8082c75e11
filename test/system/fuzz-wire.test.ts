import { connect } from 'node:net'
import fc from 'fast-check'
import t from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { errorShapeProblem } from '../helpers/error-shape.ts'
import { fuzzSettings, propertyHolds } from '../helpers/fuzz.ts'
import { startServer } from '../helpers/server.ts'

// Property-based fuzzing of what app.inject cannot send: a request's bytes on the wire
// (request line, Host, Expect, Upgrade, framing, header lines), to a real process. Node
// answers two itself: an HTTP/1.1 request without Host (a 400 with no body), and a CONNECT
// (its connection closed). Seeded and reproducible like test/fuzz-http.test.ts.

// About 4 s; npm run fuzz runs many more.
const DEFAULT_RUNS = 300
const { seed, numRuns } = fuzzSettings(DEFAULT_RUNS)
// No rate limit or lockout: every answer is the one to the request itself.
const ENV = { API_TOKENS: TOKEN, RATE_LIMIT_PER_TOKEN: '0', AUTH_FAILURE_LIMIT: '1000000000' }
// Past this, a request that got no answer counts as unanswered.
const ANSWER_WITHIN_MS = 3000

// ---------------------------------------------------------------------------------
// Requests, as bytes

const TCHAR = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}$/
const method = fc.oneof(
  fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'M-SEARCH', 'get'),
  // PRI opens HTTP/2's connection preface, which an HTTP/1.1 server can only close.
  fc.stringMatching(TCHAR).filter((name) => name !== 'PRI')
)
const target = fc.constantFrom(
  '/plants', '/plants?limit=1', '/plants/1', '/plants/-1', '/plants/%zz', '/plants?limit=1&limit=2', '/plants?page=2',
  '/health', '/health/ready', '/nothing', '//plants', '/docs', '/', '*', 'example.com:443', 'http://x/plants', 'plants', ''
)
const version = fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.2', 'HTTPS/1.1', 'http/1.1')
const host = fc.constantFrom<string[]>([], ['Host: x'], ['Host: x'], ['Host:'], ['Host: x', 'Host: y'], ['Host: x, y'], [`Host: ${'h'.repeat(300)}`])
const expect = fc.constantFrom<string[]>([], [], ['Expect: 100-continue'], ['Expect: something-else'], ['Expect:'], ['Expect: 100-continue, other'])
const authorization = fc.constantFrom<string[]>([], [`Authorization: Bearer ${TOKEN}`], ['Authorization: Bearer wrong-token-0123456789'], ['Authorization: Basic eDp5'])
const upgrade = fc.constantFrom<string[]>([], [], ['Connection: Upgrade', 'Upgrade: websocket'], ['Connection: Upgrade, HTTP2-Settings', 'Upgrade: h2c', 'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA'], ['Connection: close'], ['Connection: keep-alive'])
const contentType = fc.constantFrom<string[]>([], ['Content-Type: application/json'], ['Content-Type: application/json'], ['Content-Type: text/plain'])
// Printable header values (no CR or LF: those are the framing's, generated below).
const header = fc.tuple(fc.stringMatching(TCHAR), fc.string({ maxLength: 40, unit: fc.constantFrom(...' !"#$%&\'()*+,-./09:;<=>?@AZaz[\\]^_`{|}~é\t'.split('')) }))
  .map(([name, value]) => `${name}: ${value}`)

const content = fc.oneof(
  fc.record({ id: fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }), name: fc.string({ maxLength: 20 }) })
    .map(({ id, name }) => `{"id":${id},"name":${JSON.stringify(name)}}`),
  fc.string({ maxLength: 60 })
)

/** How the body is framed: the header lines and the bytes after the head. Some frame nothing that parses. */
interface Framing { lines: string[], body: string, ambiguous: boolean }
const chunked = (body: string) => `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`
const framing: fc.Arbitrary<Framing> = fc.tuple(content, fc.nat(20)).chain(([body, more]) => {
  const length = Buffer.byteLength(body)
  return fc.constantFrom<Framing>(
    { lines: [], body: '', ambiguous: false },
    { lines: [`Content-Length: ${length}`], body, ambiguous: false },
    { lines: [`Content-Length: ${length + 1 + more}`], body, ambiguous: false }, // cut short
    { lines: ['Content-Length: -1'], body, ambiguous: true },
    { lines: ['Content-Length: 1e3'], body, ambiguous: true },
    { lines: [`Content-Length: ${length}`, `Content-Length: ${length + 1}`], body, ambiguous: true },
    { lines: ['Transfer-Encoding: chunked'], body: chunked(body), ambiguous: false },
    { lines: ['Transfer-Encoding: chunked, gzip'], body: chunked(body), ambiguous: true },
    // A smuggler's request: one length for a proxy, another for the service, a request behind it.
    { lines: ['Content-Length: 4', 'Transfer-Encoding: chunked'], body: `0\r\n\r\nGET /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`, ambiguous: true },
    { lines: ['Transfer-Encoding: chunked', 'Content-Length: 4'], body: chunked(body), ambiguous: true }
  )
})

interface WireRequest { method: string, bytes: string, framing: Framing }

const wireRequest: fc.Arbitrary<WireRequest> = fc.record({
  method,
  target,
  version,
  framing,
  lines: fc.tuple(host, expect, authorization, upgrade, contentType, fc.array(header, { maxLength: 4 }))
}).chain(({ method, target, version, framing, lines }) => {
  const all = [...lines.flat(), ...framing.lines]
  // Every header line, in any order.
  return fc.shuffledSubarray(all, { minLength: all.length }).map((shuffled) => ({
    method,
    framing,
    bytes: `${method} ${target} ${version}\r\n${shuffled.map((line) => `${line}\r\n`).join('')}\r\n${framing.body}`
  }))
})

// ---------------------------------------------------------------------------------
// Answers, as bytes

interface WireAnswer { status: number, headers: Record<string, string>, body: string }

/**
 * The answers in what a connection received, in order, 1xx included; throws on bytes
 * that are not an HTTP/1.1 answer. A HEAD's first final answer has no body.
 */
function parseAnswers (received: Buffer, head: boolean): WireAnswer[] {
  const answers: WireAnswer[] = []
  let at = 0
  while (at < received.length) {
    const end = received.indexOf('\r\n\r\n', at)
    if (end === -1) throw new Error(`an answer's head is cut off: ${JSON.stringify(received.subarray(at, at + 200).toString('latin1'))}`)
    const [statusLine, ...lines] = received.subarray(at, end).toString('latin1').split('\r\n')
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine)
    if (status === null) throw new Error(`not an HTTP/1.1 status line: ${JSON.stringify(statusLine)}`)
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
    }
    at = end + 4
    const code = Number(status[1])
    let body = ''
    // Bytes that do not parse are answered in full, whatever method they seem to name.
    const refused = headers.connection === 'close' && received.length - at === Number(headers['content-length'])
    const bodiless = code < 200 || code === 204 || code === 304 || (head && !refused && answers.every((a) => a.status < 200))
    if (!bodiless && headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const sizeEnd = received.indexOf('\r\n', at)
        const size = parseInt(received.subarray(at, sizeEnd).toString('latin1'), 16)
        body += received.subarray(sizeEnd + 2, sizeEnd + 2 + size).toString('utf8')
        at = sizeEnd + 2 + size + 2
        if (size === 0 || Number.isNaN(size)) break
      }
    } else if (!bodiless) {
      const length = Number(headers['content-length'] ?? received.length - at)
      body = received.subarray(at, at + length).toString('utf8')
      at += length
    }
    answers.push({ status: code, headers, body })
  }
  return answers
}

/**
 * Writes the request, ends the sending side (as a client with nothing more to say does)
 * and collects everything until the service closes the connection. As bytes, not as
 * server.send's text: an answer's Content-Length counts bytes.
 */
async function exchange (port: number, bytes: string): Promise<{ received: Buffer, closedInTime: boolean }> {
  const socket = connect(port, '127.0.0.1')
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  socket.on('error', () => {})
  socket.end(Buffer.from(bytes, 'utf8'))
  const closedInTime = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => { socket.destroy(); resolve(false) }, ANSWER_WITHIN_MS)
    socket.on('close', () => { clearTimeout(timer); resolve(true) })
  })
  return { received: Buffer.concat(chunks), closedInTime }
}

// ---------------------------------------------------------------------------------
// The properties, all of one run

/** Node's own answer to an HTTP/1.1 request without Host (requireHostHeader): a 400 with no body. */
function isHostRefusal (req: WireRequest, answer: WireAnswer): boolean {
  const head = req.bytes.slice(0, req.bytes.indexOf('\r\n\r\n'))
  return answer.status === 400 && answer.body === '' && head.split('\r\n', 1)[0].endsWith(' HTTP/1.1') && !/\r\nhost:/i.test(head)
}

function check (req: WireRequest, received: Buffer, closedInTime: boolean): void {
  const shown = JSON.stringify(req.bytes.slice(0, 400))
  if (!closedInTime) throw new Error(`no end to the exchange within ${ANSWER_WITHIN_MS} ms: ${shown}`)
  if (received.length === 0) {
    if (req.method === 'CONNECT') return
    throw new Error(`the connection was closed unanswered: ${shown}`)
  }
  const answers = parseAnswers(received, req.method === 'HEAD').filter(({ status }) => status >= 200)
  if (answers.length === 0) throw new Error(`only an interim answer: ${shown}`)
  const [first] = answers
  if (first.status >= 500) throw new Error(`a ${first.status}: ${shown}\n${first.body}`)
  if (req.framing.ambiguous) {
    if (first.status !== 400 || answers.length !== 1) {
      throw new Error(`a body framed two ways, or by a length or coding that does not parse, answered ${answers.map((a) => a.status).join(', ')} rather than one 400: ${shown}`)
    }
  }
  for (const answer of answers) {
    if (answer.status < 400 || isHostRefusal(req, answer)) continue
    const problem = errorShapeProblem(answer.status, answer.headers['content-type'] ?? '', answer === first && req.method === 'HEAD' ? undefined : answer.body)
    if (problem !== undefined) throw new Error(`${problem}; the answer: ${answer.status} ${answer.body}\nto ${shown}`)
  }
}

t.test('every request on the wire, however framed, gets an HTTP/1.1 answer, never a 5xx; every error in the Error shape; a body framed two ways, or by a length or coding that does not parse, one 400; and the service goes on', async (t) => {
  const server = await startServer(t, ENV)
  const port = Number(new URL(server.url).port)
  const property = fc.asyncProperty(wireRequest, async (req) => {
    const { received, closedInTime } = await exchange(port, req.bytes)
    check(req, received, closedInTime)
    if (server.child.exitCode !== null) throw new Error(`the service exited: ${JSON.stringify(req.bytes)}`)
  })
  await propertyHolds(t, property, seed, numRuns)
  const after = await server.request('GET', '/plants?limit=1')
  t.equal(after.statusCode, 200, 'a plain request is served after them all')
})
