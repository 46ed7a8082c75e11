import { setTimeout as sleep } from 'node:timers/promises'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { AUTH, assertError, postPlant, testApp, TOKEN } from './helpers/app.ts'
import { openReader, type RawReader } from './helpers/feed-readers.ts'
import { fuzzSettings, propertyHolds } from './helpers/fuzz.ts'

// The change feed's reader slots (issue #54, finding 1): a slot is held exactly while its
// stream is open, whatever its reader does; and the smaller holes of the same review.

const { seed, numRuns } = fuzzSettings(8)
const PER_TOKEN = 8

/** Fills the feed past what the sockets of a reader that stops reading can buffer: the stream then waits for it. */
async function fillFeed (t: Test, app: FastifyInstance, plants: number): Promise<void> {
  const name = '🌿'.repeat(1000) // 4 KB of UTF-8
  for (let i = 0; i < plants; i += 250) {
    const created = await Promise.all(Array.from({ length: 250 }, async (_, j) => (await postPlant(app, { id: i + j, name })).statusCode))
    if (created.some((status) => status !== 200)) t.fail(`creates answered ${created.join()}`)
  }
}

async function listening (app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return (app.server.address() as { port: number }).port
}

/**
 * How many more streams the token may open: opens them one by one until one is refused
 * (429), waiting a moment and trying again while fewer than `expected` were taken (a reader
 * that went is given back as soon as the service sees it go).
 */
async function freeSlots (t: Test, port: number, token: string, expected: number): Promise<number> {
  const taken: RawReader[] = []
  const deadline = performance.now() + 5000
  try {
    for (;;) {
      const probe = openReader(t, port, { query: '?after=0&limit=1', token })
      const status = await probe.status
      if (status === 200) {
        taken.push(probe)
        continue
      }
      probe.socket.destroy()
      if (status !== 429) throw new Error(`a probe answered ${status}`)
      if (taken.length >= expected || performance.now() > deadline) return taken.length
      await sleep(50)
    }
  } finally {
    for (const probe of taken) probe.socket.destroy()
  }
}

type Behaviour = 'read' | 'read-and-go' | 'stall-and-go' | 'stall-and-half-close' | 'stall-and-reset'
const BEHAVIOUR = fc.constantFrom<Behaviour>('read', 'read-and-go', 'stall-and-go', 'stall-and-half-close', 'stall-and-reset')

t.test('slots held equal streams open, after any mix of readers that read, stall, half-close or reset', async (t) => {
  const tokens = Array.from({ length: 300 }, (_, i) => `${TOKEN}-${i}`)
  const app = await testApp(t, { API_TOKENS: [TOKEN, ...tokens].join(','), CHANGES_MAX_READERS_PER_TOKEN: String(PER_TOKEN) })
  await fillFeed(t, app, 3000)
  const port = await listening(app)
  let run = 0
  await propertyHolds(t, fc.asyncProperty(fc.array(BEHAVIOUR, { minLength: 1, maxLength: PER_TOKEN - 2 }), async (behaviours) => {
    // A token of its own each run: what a run leaves held cannot hide in the next one.
    const token = tokens[run++]
    const readers: RawReader[] = []
    try {
      await Promise.all(behaviours.map(async (behaviour) => {
        const reader = openReader(t, port, { query: '?after=0', token })
        readers.push(reader)
        if (await reader.status !== 200) throw new Error(`a ${behaviour} reader was answered ${await reader.status}`)
        if (behaviour === 'read') return
        if (behaviour === 'read-and-go') {
          await reader.received(1024 * 1024)
          reader.socket.destroy()
          return
        }
        // Stalled: the service's writes back up behind the full socket buffers.
        reader.socket.pause()
        await sleep(200)
        if (behaviour === 'stall-and-go') reader.socket.destroy()
        else if (behaviour === 'stall-and-half-close') reader.socket.end()
        else reader.socket.resetAndDestroy()
      }))
      const open = behaviours.filter((behaviour) => behaviour === 'read').length
      const free = await freeSlots(t, port, token, PER_TOKEN - open)
      if (free !== PER_TOKEN - open) throw new Error(`${open} streams open, yet ${PER_TOKEN - free} slots held`)
    } finally {
      for (const reader of readers) reader.socket.destroy()
    }
  }), seed, numRuns, seed, true)
})

t.test('a stream whose reader stops reading is cut off after SEND_TIMEOUT_MS, and its slot given back', async (t) => {
  const app = await testApp(t, { CHANGES_MAX_READERS_PER_TOKEN: '1', SEND_TIMEOUT_MS: '500' })
  await fillFeed(t, app, 3000)
  const port = await listening(app)
  const stalled = openReader(t, port, { query: '?after=0' })
  t.equal(await stalled.status, 200)
  stalled.socket.pause()
  // A paused socket sees its end only once it reads what came before it.
  await sleep(1500)
  stalled.socket.resume()
  await stalled.closed
  t.pass('the service closed the connection')
  const next = openReader(t, port, { query: '?after=0&limit=1' })
  t.equal(await next.status, 200, 'the token\'s slot is free again: the next stream is served, not 429')
})

t.test('HEAD with Accept: text/event-stream answers at once, holding no slot', async (t) => {
  const app = await testApp(t, { CHANGES_MAX_READERS_PER_TOKEN: '1' })
  await postPlant(app, { id: 1, name: 'Fern' })
  const port = await listening(app)
  for (let i = 0; i < 3; i++) {
    const head = openReader(t, port, { method: 'HEAD' })
    t.equal(await head.status, 200, `HEAD ${i + 1} answered`)
  }
  const stream = openReader(t, port)
  t.equal(await stream.status, 200, 'the token\'s one slot is free for a stream')
  const head = await app.inject({ method: 'HEAD', url: '/plants/changes?wait=30', headers: AUTH })
  t.equal(head.statusCode, 200, 'a HEAD never waits either')
  t.equal(head.headers['content-type'], 'application/json; charset=utf-8')
})

t.test('a Last-Event-ID beyond 2^53 is refused as an after beyond it is', async (t) => {
  const app = await testApp(t)
  const beyond = '9007199254740993'
  const byAfter = await app.inject({ url: `/plants/changes?after=${beyond}`, headers: { ...AUTH, accept: 'text/event-stream' } })
  assertError(t, byAfter, 400, 'invalid_parameter')
  const byHeader = await app.inject({ url: '/plants/changes', headers: { ...AUTH, accept: 'text/event-stream', 'last-event-id': beyond } })
  assertError(t, byHeader, 400, 'invalid_parameter')
  t.match(byHeader.json().message, /last-event-id/i)
  const largest = await app.inject({ url: '/plants/changes', headers: { ...AUTH, accept: 'text/event-stream', 'last-event-id': String(Number.MAX_SAFE_INTEGER) } })
  assertError(t, largest, 410, 'cursor_expired')
})

t.test('POST /plants/changes is 405 with the feed\'s own methods in Allow', async (t) => {
  const app = await testApp(t)
  for (const method of ['POST', 'PATCH'] as const) {
    const res = await app.inject({ method, url: '/plants/changes', headers: AUTH })
    assertError(t, res, 405, 'method_not_allowed')
    t.equal(res.headers.allow, 'GET, HEAD', method)
  }
  t.equal((await app.inject({ method: 'PATCH', url: '/plants/1', headers: AUTH })).headers.allow, 'DELETE, GET, HEAD, PUT', 'a plant\'s own')
})
