import { setTimeout as sleep } from 'node:timers/promises'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { AUTH, postPlant, testApp } from './app.ts'
import { fuzzSettings, propertyHolds } from './fuzz.ts'
import { startReceiver, type Receiver } from './receiver.ts'
import { retryUntil } from './wait.ts'

// A subscription disabled and enabled again, in any order with writes (issue #54, findings
// 3 and 4): each plant's events reach it in the order they happened, each under one
// webhook-id, and every event whose data is kept reaches it.

const EVERY_EVENT = ['plant.created', 'plant.updated', 'plant.deleted']

interface Write { op: 'create' | 'update' | 'delete', plant: number }
const WRITE: fc.Arbitrary<Write> = fc.record({ op: fc.constantFrom('create' as const, 'update' as const, 'delete' as const), plant: fc.integer({ min: 1, max: 3 }) })
/** A round: writes while the receiver is down (past WEBHOOK_MAX_PENDING they disable the subscription), then maybe an enable and writes right after it, the receiver up or still down. */
const ROUND = fc.record({
  whileDown: fc.array(WRITE, { minLength: 1, maxLength: 5 }),
  enable: fc.boolean(),
  afterEnable: fc.array(WRITE, { maxLength: 4 }),
  up: fc.boolean(),
  settle: fc.boolean()
})

/** An event as the feed showed it when it committed: its seq, plant, and the exact body its webhooks get. */
interface Seen { seq: number, plant: number, body: string }

/** Follows the feed after `cursor`, recording each event's body before a later delete can erase it. */
async function record (app: FastifyInstance, cursor: number, seen: Map<string, Seen>): Promise<number> {
  const page = (await app.inject({ url: `/plants/changes?after=${cursor}&limit=1000`, headers: AUTH })).json()
  for (const { seq, id, data } of page.changes) if (data !== undefined) seen.set(JSON.stringify(data), { seq, plant: id, body: JSON.stringify(data) })
  return page.next
}

/** What went wrong with what the receiver acknowledged, or undefined when nothing did. */
function violation (receiver: Receiver, seen: Map<string, Seen>, kept: Set<number>): string | undefined {
  const ids = new Map<number, Set<string>>()
  const order = new Map<number, number[]>()
  for (const { status, body, headers } of receiver.received) {
    if (status !== 200) continue
    const event = seen.get(body)
    if (event === undefined) return `acknowledged an event the feed never showed: ${body}`
    const id = String(headers['webhook-id'])
    const idsOf = ids.get(event.seq) ?? new Set()
    // At least once: the same delivery again is allowed, under its one webhook-id.
    if (idsOf.has(id)) continue
    idsOf.add(id)
    ids.set(event.seq, idsOf)
    if (idsOf.size > 1) return `event ${event.seq} (${body}) delivered twice, under webhook-ids ${[...idsOf].join(', ')}`
    const plant = order.get(event.plant) ?? []
    if (plant.length > 0 && plant[plant.length - 1] > event.seq) return `plant ${event.plant}: event ${event.seq} after event ${plant[plant.length - 1]}`
    order.set(event.plant, [...plant, event.seq])
  }
  const missing = [...kept].filter((seq) => !ids.has(seq))
  return missing.length === 0 ? undefined : `events ${missing.join(', ')} never acknowledged`
}

/** The bodies a receiver acknowledged, once per webhook-id (delivery is at least once), in the order they came. */
function acknowledgedOnce (receiver: Receiver): Array<{ id: string, body: Record<string, any> }> {
  const ids = new Set<string>()
  const bodies = []
  for (const { status, headers, body } of receiver.received) {
    const id = String(headers['webhook-id'])
    if (status !== 200 || ids.has(id)) continue
    ids.add(id)
    bodies.push({ id, body: JSON.parse(body) })
  }
  return bodies
}

/** What a plant's acknowledged events say of it, in order: its name after each, or deleted. */
function states (receiver: Receiver, plant: number): string[] {
  return acknowledgedOnce(receiver).filter(({ body }) => body.id === plant)
    .map(({ body }) => body.type === 'plant.deleted' ? 'deleted' : body.new?.name ?? body.name)
}

export function replaySuite (t: Test, databaseUrl: (t: Test) => Promise<string>): void {
  const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '10', WEBHOOK_MAX_PENDING: '2' }
  const webhookOf = async (app: FastifyInstance, receiver: Receiver): Promise<string> =>
    (await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: receiver.url, events: EVERY_EVENT } })).json().id
  const subscription = async (app: FastifyInstance, webhook: string): Promise<Record<string, any>> => (await app.inject({ url: `/webhooks/${webhook}`, headers: AUTH })).json()
  const enable = async (app: FastifyInstance, webhook: string): Promise<void> => {
    t.equal((await app.inject({ method: 'POST', url: `/webhooks/${webhook}/enable`, headers: AUTH })).statusCode, 202)
  }
  const put = async (app: FastifyInstance, id: number, name: string): Promise<void> => {
    t.equal((await app.inject({ method: 'PUT', url: `/plants/${id}`, headers: AUTH, payload: { name } })).statusCode, 200)
  }
  const remove = async (app: FastifyInstance, id: number): Promise<void> => {
    t.equal((await app.inject({ method: 'DELETE', url: `/plants/${id}`, headers: AUTH })).statusCode, 204)
  }
  const drained = async (app: FastifyInstance, webhook: string): Promise<void> => {
    await retryUntil(async () => await subscription(app, webhook), (s) => s.pendingDeliveries === 0, 15_000, 20)
  }
  const settled = async (app: FastifyInstance, webhook: string, done: () => boolean): Promise<void> => {
    await retryUntil(async () => await subscription(app, webhook), (s) => s.pendingDeliveries === 0 && s.missedSince === undefined && done(), 15_000, 20)
  }

  t.test('a replay keeps each plant\'s order: what changed while disabled reaches the receiver before what changed right after enable', async (t) => {
    const app = await testApp(t, { ...ENV, DATABASE_URL: await databaseUrl(t) })
    const receiver = await startReceiver(t, () => 503)
    const webhook = await webhookOf(app, receiver)
    await postPlant(app, { id: 1, name: 'A' })
    await postPlant(app, { id: 2, name: 'Moss' })
    await put(app, 1, 'B')
    t.equal((await subscription(app, webhook)).status, 'disabled', 'two pending: the update disabled it')
    await remove(app, 2)
    receiver.answer(() => 200)
    await drained(app, webhook)
    await enable(app, webhook)
    await put(app, 1, 'C')
    await postPlant(app, { id: 2, name: 'Moss again' })
    await settled(app, webhook, () => states(receiver, 1).includes('C') && states(receiver, 2).includes('Moss again'))
    t.same(states(receiver, 1), ['A', 'B', 'C'], 'the receiver holds C, as the store does')
    // Its creation, pending when it was deleted, is never sent, unless an attempt was already on
    // its way then (at least once); either way the delete comes before the second creation.
    const moss = states(receiver, 2)
    t.same(moss.slice(-2), ['deleted', 'Moss again'], 'deleted while disabled, created again after enable: created')
    t.ok(moss.length === 2 || (moss.length === 3 && moss[0] === 'Moss'), `nothing else, in no other order: ${moss.join(', ')}`)
  })

  t.test('a replay sends no event twice: what was delivered after an earlier enable is not replayed', async (t) => {
    const app = await testApp(t, { ...ENV, DATABASE_URL: await databaseUrl(t) })
    const receiver = await startReceiver(t, () => 503)
    const webhook = await webhookOf(app, receiver)
    // Two pending, then eight missed: the replay queues two at a time (its bound), a chunk
    // a second, so it is still under way when the receiver fails again.
    for (let id = 1; id <= 10; id++) await postPlant(app, { id, name: `p${id}` })
    t.equal((await subscription(app, webhook)).status, 'disabled')
    receiver.answer(() => 200)
    await drained(app, webhook)
    await enable(app, webhook)
    // The replay's first chunk delivered: the replay is under way.
    await retryUntil(async () => acknowledgedOnce(receiver).length, (n) => n >= 4, 15_000, 20)
    await drained(app, webhook)
    await postPlant(app, { id: 11, name: 'p11' })
    await drained(app, webhook)
    // Disabled again, if a live announce takes it to its bound.
    receiver.answer(() => 503)
    for (const id of [12, 13, 14]) await postPlant(app, { id, name: `p${id}` })
    receiver.answer(() => 200)
    await drained(app, webhook)
    await enable(app, webhook)
    await settled(app, webhook, () => acknowledgedOnce(receiver).length >= 14)
    await sleep(300)
    const plants = acknowledgedOnce(receiver).map(({ body }) => body.id)
    t.same(plants.toSorted((a, b) => a - b), Array.from({ length: 14 }, (_, i) => i + 1), `each plant once, under one webhook-id: ${plants.join(', ')}`)
  })

  t.test('any interleaving of disable, enable and writes delivers each plant\'s events in order, each event once', async (t) => {
    const { seed, numRuns } = fuzzSettings(6)
    // Retries and pauses kept short: a receiver down for a moment is tried again soon.
    const app = await testApp(t, { DATABASE_URL: await databaseUrl(t), WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '10', WEBHOOK_MAX_PENDING: '2' })
    const receiver = await startReceiver(t)
    let run = 0
    await propertyHolds(t, fc.asyncProperty(fc.array(ROUND, { minLength: 1, maxLength: 4 }), async (rounds) => {
      const base = 10 * ++run
      receiver.answer(() => 200)
      receiver.received.length = 0
      const subscribed = await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: receiver.url, events: EVERY_EVENT } })
      const webhook = subscribed.json().id as string
      const seen = new Map<string, Seen>()
      const start = (await app.inject({ url: '/plants/changes?limit=1', headers: AUTH })).json().latest as number
      let cursor = start
      let step = 0
      const write = async ({ op, plant }: Write): Promise<void> => {
        const name = `r${run}s${step++}`
        if (op === 'create') await postPlant(app, { id: base + plant, name })
        else if (op === 'update') await app.inject({ method: 'PUT', url: `/plants/${base + plant}`, headers: { ...AUTH, 'content-type': 'application/json' }, payload: { name } })
        else await app.inject({ method: 'DELETE', url: `/plants/${base + plant}`, headers: AUTH })
        cursor = await record(app, cursor, seen)
      }
      try {
        for (const round of rounds) {
          receiver.answer(() => 503)
          for (const each of round.whileDown) await write(each)
          if (round.up) receiver.answer(() => 200)
          if (round.enable) await app.inject({ method: 'POST', url: `/webhooks/${webhook}/enable`, headers: AUTH })
          for (const each of round.afterEnable) await write(each)
          if (round.settle) await sleep(100)
        }
        receiver.answer(() => 200)
        await app.inject({ method: 'POST', url: `/webhooks/${webhook}/enable`, headers: AUTH })
        // The run's events whose data the feed still holds: those of the plants not deleted since.
        const { changes } = (await app.inject({ url: `/plants/changes?after=${start}&limit=1000`, headers: AUTH })).json()
        const kept = new Set<number>(changes.filter((change: { data?: unknown }) => change.data !== undefined).map((change: { seq: number }) => change.seq))
        const { value: settled } = await retryUntil(async () => (await app.inject({ url: `/webhooks/${webhook}`, headers: AUTH })).json(),
          (s) => s.pendingDeliveries === 0 && s.missedSince === undefined && violation(receiver, seen, kept)?.endsWith('never acknowledged') !== true, 20_000, 50)
        const wrong = violation(receiver, seen, kept)
        if (wrong !== undefined) throw new Error(`${wrong} (subscription ${JSON.stringify(settled)})`)
      } finally {
        await app.inject({ method: 'DELETE', url: `/webhooks/${webhook}`, headers: AUTH })
      }
    }), seed, numRuns, seed, true)
  })
}
