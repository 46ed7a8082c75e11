import fc from 'fast-check'
import { pino } from 'pino'
import { INT64_MAX, INT64_MIN } from '../../schemas/int64.ts'
import type { EventType } from '../../schemas/webhook.ts'
import type { PlantStore, StoredPlant } from '../../src/store/store.ts'

// What a copy must carry: plants over the whole int64 range with awkward names, and
// subscriptions in each state (enabled with pending deliveries, disabled having missed
// events, enabled with a replay to come), read back and exercised through the store.

export const STORE_CONTEXT = { log: pino({ level: 'silent' }), maxBatch: 512, maxQueueBytes: 1 << 26, onBatch: () => {} }

const EDGES: StoredPlant[] = [
  { id: INT64_MIN, name: 'the least\u0000id', tag: '' },
  { id: INT64_MAX, name: '最大の植物 🌵', tag: '🏷\u0000' },
  { id: -1n, name: '' },
  { id: 0n, name: 'zero', tag: 'Ω' },
  { id: 2n ** 53n + 1n, name: '\u{10FFFF}\uFFFF𝄞' }
]

/** The edges, then `count` random plants over the whole range (ids distinct), from a fixed seed. */
export function plantsToCopy (count: number, seed = 53): StoredPlant[] {
  // Ids near the edges (fast-check's bias) and spread evenly over the range.
  const id = fc.bigInt({ min: INT64_MIN, max: INT64_MAX })
  const random = fc.sample(fc.tuple(fc.oneof(id, fc.noBias(id)), fc.string({ unit: 'binary', maxLength: 16 }),
    fc.option(fc.string({ unit: 'binary', maxLength: 8 }), { nil: undefined })), { numRuns: count, seed })
  const byId = new Map<bigint, StoredPlant>()
  for (const plant of [...EDGES, ...random.map(([id, name, tag]) => tag === undefined ? { id, name } : { id, name, tag })]) {
    if (!byId.has(plant.id)) byId.set(plant.id, plant)
  }
  return [...byId.values()]
}

export const ascending = (plants: StoredPlant[]): StoredPlant[] => [...plants].sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const hex = (n: number): string => `wh_${String(n).padStart(32, '0')}`
export const SUBSCRIPTIONS: Array<{ id: string, events: EventType[] }> = [
  { id: hex(1), events: ['plant.created'] }, // disabled once 5 are pending
  { id: hex(2), events: ['plant.deleted'] }, // enabled, 2 pending
  { id: hex(3), events: ['plant.created', 'plant.updated'] } // disabled, then enabled: its replay to come
]
const MAX_PENDING = 5

/** Fills a new store: the subscriptions, the plants, two deletions, one enable. Returns the plants it holds. */
export async function fillStore (store: PlantStore, plants: StoredPlant[]): Promise<StoredPlant[]> {
  store.webhooks.limitPending(MAX_PENDING)
  for (const [i, { id, events }] of SUBSCRIPTIONS.entries()) {
    await store.webhooks.subscribe({ id, url: `https://hooks${i}.example/in?x=${i}`, secret: `whsec_${Buffer.from(`secret ${i}`).toString('base64')}`, events, createdAt: new Date(1_700_000_000_123 + i) }, 10)
  }
  for (let i = 0; i < plants.length; i += 500) await Promise.all(plants.slice(i, i + 500).map(async (plant) => await store.create(plant)))
  const [gone, alsoGone] = plants.slice(-2)
  await store.delete(gone.id)
  await store.delete(alsoGone.id)
  await store.webhooks.enable(SUBSCRIPTIONS[2].id)
  return plants.slice(0, -2)
}

/** What a store holds, read without changing it: its plants, subscriptions and pending deliveries (a copy moves no other), their seqs left out. */
export async function contentOf (store: PlantStore): Promise<unknown> {
  const plants: StoredPlant[] = []
  for (let page = await store.list({ limit: 1000 }); page.length > 0; page = await store.list({ limit: 1000, after: page.at(-1)!.id })) plants.push(...page)
  const subscriptions = await store.webhooks.subscriptions()
  const deliveries = await Promise.all(subscriptions.map(async ({ id }) =>
    (await store.webhooks.deliveries(id, { limit: 100 })).filter(({ status }) => status === 'pending').map(({ seq, ...delivery }) => delivery)))
  return { plants, subscriptions, deliveries, pending: await store.webhooks.pending() }
}

/**
 * What the store does next with its outbox: each subscription's due deliveries claimed (ids
 * and the exact bodies), the disabled one enabled and its missed events replayed, the
 * replay to come run; the plants of the deliveries that queues. Changes the store.
 */
export async function outboxOf (store: PlantStore): Promise<unknown> {
  store.webhooks.limitPending(1000)
  const claims = []
  for (const { id } of SUBSCRIPTIONS) {
    // Due at the same moment, they come in either order.
    const due = await store.webhooks.claim(id, 100, 60_000)
    claims.push(due.map(({ id, payload, attempts }) => ({ id, payload: payload.toString(), attempts })).sort((a, b) => a.id < b.id ? -1 : 1))
  }
  await store.webhooks.enable(SUBSCRIPTIONS[0].id)
  const replayed = [await store.webhooks.replay(SUBSCRIPTIONS[0].id, 1000), await store.webhooks.replay(SUBSCRIPTIONS[2].id, 1000)]
  const queued = await Promise.all(SUBSCRIPTIONS.map(async ({ id }) =>
    (await store.webhooks.deliveries(id, { limit: 100 })).map(({ plantId, event, status }) => ({ plantId, event, status }))))
  return { claims, replayed, queued }
}
