import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { CREATE_HEAD, logsArrived, startServer, waitForLine } from '../helpers/server.ts'

// Connections: deadlines, pipelining, bytes that are not HTTP (floods of connections and files: files-exhausted).

t.test('a service with short deadlines for headers (500 ms) and requests (1 s)', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN, HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: '1000' })

  t.test('slow clients cannot hold a connection: headers and bodies have deadlines', async (t) => {
    const trickledHeaders = await server.send(['POST /plants HTTP/1.1\r\n', 'Host: x\r\n', 'X-A: 1\r\n', 'X-B: 1\r\n', 'X-C: 1\r\n', 'X-D: 1\r\n', 'X-E: 1\r\n', 'X-F: 1\r\n', 'X-G: 1\r\n', 'X-H: 1\r\n'], { gapMs: 300 })
    t.match(trickledHeaders.text, /^HTTP\/1.1 408 Request Timeout/)
    t.match(trickledHeaders.text, /\{"error":408,"message":"the request did not arrive within the time limit","code":"request_timeout"\}$/)
    t.ok(trickledHeaders.sent < 10, `closed after ${trickledHeaders.ms} ms, before the client finished: ${trickledHeaders.sent} of 10 lines sent`)

    const trickledBody = await server.send([CREATE_HEAD, '{"id":', '1,', '"name":', '"x', 'y', 'z', 'z', 'z', 'z', 'z', 'z'], { gapMs: 300 })
    t.match(trickledBody.text, /408/)
    t.ok(trickledBody.sent < 12, `closed after ${trickledBody.ms} ms, ${trickledBody.sent} of 12 pieces sent`)

    // Nothing sent at all: the headers' deadline holds too (the client would give up at 30 s, unanswered).
    const silent = await server.send([], { signal: AbortSignal.timeout(30_000) })
    t.match(silent.text, /^HTTP\/1.1 408 Request Timeout/, `a connection that sends nothing answered and closed after ${silent.ms} ms`)
  })

  t.test('bytes that are not HTTP after whole requests: those requests are answered first, then the 400, then the connection closes', async (t) => {
    const create = (id: number): string => {
      const body = JSON.stringify({ id, name: 'Fern' })
      return `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
    }
    // An answer's status line follows the body before it on the same line.
    const statuses = (text: string): string[] => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map(([, status]) => status)
    // A create stored and then answered only with the garbage's 400, before: its client was told it failed.
    const { text } = await server.send([`${create(4242)}GET /health HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n`])
    t.same(statuses(text), ['200', '200', '400'], 'the create, the health check, then the refusal')
    t.match(text, /\r\n\r\n\{"name":"Fern"\}HTTP\/1\.1 200 /, 'the create\'s answer is whole')
    t.match(text, /\{"error":400,"message":"the request is not valid HTTP","code":"invalid_request"\}$/)
    t.equal((await server.request('GET', '/plants/4242')).statusCode, 200, 'and the plant its client was told of is stored')
    // A client that half-closes after the garbage has its requests answered; the connection then closes.
    const { text: halfClosed } = await server.send([`${create(4243)}GARBAGE\r\n\r\n`], { halfClose: true })
    t.equal(statuses(halfClosed)[0], '200', 'half-closed: the create is answered')
    t.equal((await server.request('GET', '/plants/4243')).statusCode, 200)
    // A request still arriving when the deadline passes is the one refused: nothing waits for it.
    const { text: slow } = await server.send([create(4244).slice(0, -5)], { until: (text) => text.includes('request_timeout') })
    t.same(statuses(slow), ['408'], 'a body that never ends: 408 at the deadline')
  })
})

t.test('a client that pipelines requests and reads no answer has one handled at a time, and its connection is closed after SEND_TIMEOUT_MS; one that reads gets every answer, in order', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN, SEND_TIMEOUT_MS: '1000', METRICS_CACHE_MS: '0' })
  // Pages of about 2 MiB: 4-byte characters, a thousand to a name.
  const name = '𝕏'.repeat(1000)
  for (let id = 1; id <= 500; id += 50) {
    await Promise.all(Array.from({ length: 50 }, async (_, i) => await server.request('POST', '/plants', { body: { id: id + i, name } })))
  }
  const pagesRead = async (): Promise<number> => {
    const metrics = (await server.request('GET', '/metrics')).body
    return Number(/plant_store_operation_duration_seconds_count\{operation="list",outcome="ok"\} (\d+)/.exec(metrics)?.[1] ?? 0)
  }

  const page = `GET /plants?limit=1000 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`
  const reader = connect(Number(new URL(server.url).port), '127.0.0.1')
  t.teardown(() => { reader.destroy() })
  reader.on('error', () => {})
  // 50 pages in one write, and never a byte read: Node handled all 50 at once, and held
  // each answer (100 MB) for as long as the connection lasted, which was for ever.
  reader.pause()
  reader.write(page.repeat(50))
  const logged = /connection closed: nothing moved on it for 1000 ms/
  await waitForLine(server.stdout, logged, 10_000).catch(() => {})
  const handled = await pagesRead()
  // The system's socket buffers take a few answers before the connection stops moving.
  t.ok(handled >= 1 && handled <= 8, `${handled} of the 50 pages were read from the store before the connection was closed`)
  await sleep(500)
  t.equal(await pagesRead(), handled, 'the requests still waiting went with the connection, never handled')
  t.equal(server.stdout.filter((line) => logged.test(line)).length, 1, 'the connection was closed, logged once')

  // A client that reads: 30 requests in one write, every answer, in order.
  const ids = Array.from({ length: 30 }, (_, i) => 1 + (i * 17) % 500)
  const requests = ids.map((id, i) => i % 10 === 9 ? page : `GET /plants/${id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`)
  const { text } = await server.send([requests.join('')], { until: (text) => (text.match(/HTTP\/1\.1 200 /g) ?? []).length === 30 && text.endsWith(']') })
  const answered = [...text.matchAll(/\r\n\r\n(\{"id":(\d+)|\[\{"id":1,)/g)].map((m) => m[2] === undefined ? 'page' : Number(m[2]))
  t.same(answered, ids.map((id, i) => i % 10 === 9 ? 'page' : id), 'each answer in the order of its request')
})

// Tests of one service as it starts, each leaving its store as it found it.
t.test('a service with the default settings', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN })

  t.test('headers over the limit and garbage get the Error shape too', async (t) => {
    const { text: huge } = await server.send([`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`])
    t.match(huge, /^HTTP\/1.1 431/)
    t.match(huge, /\{"error":431,"message":"the request headers are larger than the limit","code":"headers_too_large"\}$/)
    const { text: garbage } = await server.send(['NOT HTTP AT ALL\r\n\r\n'])
    t.match(garbage, /^HTTP\/1.1 400/)
    t.match(garbage, /\{"error":400,"message":"the request is not valid HTTP","code":"invalid_request"\}$/)
    // Written straight to the socket, they carry what every answer does all the same.
    for (const answer of [huge, garbage]) {
      t.match(answer, /\r\nx-request-id: [0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\r\n/, 'a fresh request id')
      t.match(answer, /\r\nx-content-type-options: nosniff\r\n/)
      t.match(answer, /\r\ncontent-security-policy: default-src 'none'; frame-ancestors 'none'\r\n/)
    }
  })

  t.test('requests Node answers itself: a missing Host is a bare 400, an unknown expectation is served, a CONNECT is closed', async (t) => {
    const auth = `Authorization: Bearer ${TOKEN}\r\n`
    // Node's requireHostHeader (RFC 9112, 3.2): a 400 with no body, then the connection closes.
    for (const [name, head] of [['with a token', auth], ['without one', '']]) {
      const { text } = await server.send([`GET /plants HTTP/1.1\r\n${head}\r\n`])
      t.match(text, /^HTTP\/1.1 400 Bad Request\r\n.*Connection: close\r\n.*\r\n\r\n$/s, `HTTP/1.1 without Host, ${name}: 400`)
    }
    for (const host of ['example.com:8080', '[::1]:3000', '127.0.0.1', '', 'xn--bcher-kva.example']) {
      const { text } = await server.send([`GET /health HTTP/1.1\r\nHost: ${host}\r\n\r\n`], { until: (text) => text.endsWith('}') })
      t.match(text, /^HTTP\/1.1 200 /, `Host: ${host}`)
    }
    const { text: old } = await server.send([`GET /plants?limit=1 HTTP/1.0\r\n${auth}\r\n`])
    t.match(old, /^HTTP\/1.1 200 .*\r\n\r\n\[\]$/s, 'HTTP/1.0 needs no Host')
    // Node answered 417 with no body; RFC 9110 lets a server ignore an expectation it does not know.
    const { text: expect } = await server.send([`GET /plants?limit=1 HTTP/1.1\r\nHost: x\r\n${auth}Expect: something-else\r\n\r\n`], { until: (text) => text.endsWith('[]') })
    t.match(expect, /^HTTP\/1.1 200 /, 'an unknown expectation is ignored')
    // No proxy here: Node closes a CONNECT's connection, unanswered.
    const { text: connect } = await server.send(['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'])
    t.equal(connect, '', 'CONNECT: closed')
    const answer = await server.request('GET', '/plants?limit=1')
    t.equal(answer.statusCode, 200, 'the service goes on serving')
  })

  t.test('a client that half-closes the connection once its request is sent gets its answer, then the connection closes', async (t) => {
    const auth = `Host: x\r\nAuthorization: Bearer ${TOKEN}\r\n`
    const statusOf = async (request: string): Promise<string> =>
      (await server.send([request], { halfClose: true })).text.split('\r\n', 1)[0]
    // A create and a delete wait for the store's commit: Node aborted them at the half-close.
    for (let id = 1; id <= 5; id++) {
      const body = JSON.stringify({ id, name: 'Fern' })
      t.equal(await statusOf(`POST /plants HTTP/1.1\r\n${auth}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`), 'HTTP/1.1 200 OK', `create ${id}`)
      t.equal(await statusOf(`GET /plants/${id} HTTP/1.1\r\n${auth}\r\n`), 'HTTP/1.1 200 OK', `read ${id}`)
      t.equal(await statusOf(`DELETE /plants/${id} HTTP/1.1\r\n${auth}\r\n`), 'HTTP/1.1 204 No Content', `delete ${id}`)
    }
    // Pipelined, then half-closed: every request sent is answered, in order.
    const { text } = await server.send([`GET /plants/1 HTTP/1.1\r\n${auth}\r\nGET /plants?limit=1 HTTP/1.1\r\n${auth}\r\n`], { halfClose: true })
    t.match(text, /^HTTP\/1.1 404 .*\r\n\r\n\{.*"code":"plant_not_found"\}HTTP\/1.1 200 .*\r\n\r\n\[\]$/s, 'two pipelined requests, two answers')
  })

  t.test('a connection with more than 64 requests pipelined behind answers it does not read is closed at once', async (t) => {
    const flooder = connect(Number(new URL(server.url).port), '127.0.0.1')
    t.teardown(() => { flooder.destroy() })
    flooder.on('error', () => {})
    flooder.pause()
    // Node stops reading a connection only once answers fill its buffer, which answers
    // waiting their turn never do: 400,000 health checks waited, 2 GB of heap, and closing
    // the connection held the event loop for minutes.
    const closed = new Promise<boolean>((resolve) => flooder.on('close', () => resolve(true)))
    for (let i = 0; i < 10; i++) flooder.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(1000))
    await waitForLine(server.stdout, /connection closed: more than 64 requests pipelined behind answers it did not read/)
    // Reading now, the client finds its connection closed: within SEND_TIMEOUT_MS (60 s), or never, before.
    flooder.resume()
    t.ok(await Promise.race([closed, sleep(30_000, false, { ref: false })]), 'closed by the service, not by SEND_TIMEOUT_MS')
    await logsArrived(server)
    t.equal(server.stdout.filter((line) => line.includes('requests pipelined behind')).length, 1, 'logged once')
    t.equal((await server.request('GET', '/health', { token: null })).statusCode, 200, 'the service answers')
  })
})
