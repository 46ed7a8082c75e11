import { once } from 'node:events'
import { connect, type AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import fc from 'fast-check'
import t from 'tap'
import { testApp, TOKEN } from './helpers/app.ts'
import { fuzzSettings, propertyHolds } from './helpers/fuzz.ts'
import { retryUntil } from './helpers/wait.ts'

const LIMIT = 1024
// Four bodies of the limit: the concurrent requests of a case often pass it.
const BUDGET = 4 * LIMIT
const { seed, numRuns } = fuzzSettings(20)

const plant = (id: number) => JSON.stringify({ id, name: 'p'.repeat(100) })
const head = (method: string, framing: string, type = 'application/json', token = TOKEN) =>
  `${method} /plants HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${token}\r\nContent-Type: ${type}\r\n${framing}\r\n`
const declared = (body: string, method = 'POST', type?: string, token?: string) => head(method, `Content-Length: ${Buffer.byteLength(body)}\r\n`, type, token) + body
const chunked = (...chunks: string[]) => head('POST', 'Transfer-Encoding: chunked\r\n') + chunks.map((c) => `${c.length.toString(16)}\r\n${c}\r\n`).join('')

// Every way a body ends: parsed, refused (400, 401, 413, 415, 503), ignored, or cut off. `true`: the client goes away.
const KINDS: Record<string, (id: number) => [string, boolean]> = {
  'a create': (id) => [declared(plant(id)), false],
  'a chunked create': (id) => [chunked(plant(id).slice(0, 50), plant(id).slice(50)) + '0\r\n\r\n', false],
  'invalid JSON': () => [declared('{"id":'), false],
  'declared past the limit': () => [head('POST', `Content-Length: ${LIMIT + 1}\r\n`) + 'x'.repeat(LIMIT + 1), false],
  'chunked past the limit': () => [chunked('x'.repeat(LIMIT), 'x'.repeat(LIMIT)) + '0\r\n\r\n', false],
  'not JSON': () => [declared('hello', 'POST', 'text/plain'), false],
  'a wrong token': (id) => [declared(plant(id), 'POST', undefined, 'wrong-token-0123456789'), false],
  'a GET with a body': (id) => [declared(plant(id), 'GET'), false],
  'cut off, declared': () => [head('POST', `Content-Length: ${LIMIT}\r\n`) + ' '.repeat(LIMIT / 2), true],
  'cut off, chunked': () => [head('POST', 'Transfer-Encoding: chunked\r\n') + `${LIMIT.toString(16)}\r\n` + ' '.repeat(LIMIT / 2), true]
}

t.test('after any mix of bodies parsed, refused and cut off, the body budget is whole again', async (t) => {
  const app = await testApp(t, { BODY_LIMIT: String(LIMIT), BODY_BYTES_IN_FLIGHT: String(BUDGET), RATE_LIMIT_PER_TOKEN: '0' })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const statuses = new Set<string>()

  const sending = (bytes: string) => {
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => {})
    socket.on('data', (data) => { statuses.add(/^HTTP\/1\.1 (\d+)/.exec(String(data))?.[1] ?? '') })
    socket.write(bytes)
    return socket
  }
  const whole = async () => (await retryUntil(async () => app.bodyBytesInFlight(), (bytes) => bytes === 0, 1000, 5)).value

  async function exchange ([bytes, leave]: [string, boolean]): Promise<void> {
    const socket = sending(bytes)
    if (leave) await sleep(5).then(() => socket.destroy())
    await once(socket, 'close')
  }

  let id = 0
  await propertyHolds(t, fc.asyncProperty(fc.array(fc.constantFrom(...Object.keys(KINDS)), { minLength: 1, maxLength: 12 }), async (kinds) => {
    await Promise.all(kinds.map(async (kind) => await exchange(KINDS[kind](++id))))
    const held = await whole()
    if (held !== 0) throw new Error(`${held} bytes still held after ${kinds.join(', ')}`)
  }), seed, numRuns)

  // And bodies certain to pass the budget: a fifth of the limit while four are held.
  statuses.clear()
  const holding = Array.from({ length: BUDGET / LIMIT + 1 }, () => sending(KINDS['cut off, declared'](0)[0]))
  await retryUntil(async () => statuses.has('503'), Boolean, 1000, 5)
  t.ok(statuses.has('503'), `one passed the budget (answers seen: ${[...statuses].sort().join(', ')})`)
  for (const socket of holding) socket.destroy()
  t.equal(await whole(), 0, 'and the budget is whole again once they go')
})
