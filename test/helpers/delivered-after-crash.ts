/**
 * The check after a webhook crash test's kill -9 and restart: every stored plant announced
 * exactly once, under one webhook-id, and every acknowledged plant stored (test/system/webhooks-crash).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import type { Received, Receiver } from './receiver.ts'
import type { RunningServer } from './server.ts'
import { retryUntil } from './wait.ts'
import { deliveryLog, webhookId, type Subscription } from './webhook-client.ts'

/** The plant id of an announcement, read from the raw body: ids beyond 2^53 stay exact. */
const plantIdOf = (body: string): string => /^\{"id":(-?\d+),/.exec(body)?.[1] ?? `unreadable body ${body}`

/**
 * After a crash and a restart on the same file: the plants stored are exactly those
 * announced, each to its one delivery (one webhook-id, its body the plant's exact JSON,
 * signed with the secret), delivered with a 200; every acknowledged plant is among them;
 * a webhook-id attempted before the crash is the one delivered after it; and the
 * delivery log says delivered. `before` is how many requests the receiver had got
 * before the crash: a delivery 200'd then but not recorded may be sent once more.
 */
export async function checkDelivered (t: Test, server: RunningServer, receiver: Receiver,
  subscription: Subscription, tried: Map<string, string>, acked: Set<string>, before: number): Promise<void> {
  // Which of the plants tried were stored, as they were sent.
  const stored = new Map<string, string>()
  const odd: string[] = []
  for (const [id, body] of tried) {
    const res = await server.request('GET', `/plants/${id}`)
    if (res.statusCode === 200 && res.body === body) stored.set(id, body)
    else if (res.statusCode !== 404) odd.push(`${id}: ${res.statusCode} ${res.body}`)
  }
  t.same(odd, [], `each plant tried either stored as created (${stored.size}) or absent (${tried.size - stored.size})`)
  t.same([...acked].filter((id) => !stored.has(id)), [], `all ${acked.size} acknowledged plants stored`)

  // Each stored plant acknowledged by the receiver: then no more requests are expected.
  const delivered = (): Set<string> => new Set(receiver.received.filter((r) => r.status === 200).map((r) => plantIdOf(r.body)))
  const { value: done, ms } = await retryUntil(async () => delivered(), (ids) => [...stored.keys()].every((id) => ids.has(id)), 15_000, 50)
  t.same([...stored.keys()].filter((id) => !done.has(id)), [], `every stored plant delivered with a 200 (after ${ms} ms)`)
  // A delivery the receiver acknowledged just before the crash, unrecorded, is sent again once its lease expires.
  const { value: log } = await retryUntil(async () => await deliveryLog(server, subscription.id),
    (log) => log.length >= stored.size && log.every((d) => d.status === 'delivered'), 10_000, 100)
  await sleep(300)

  const received = receiver.received
  const byWebhookId = new Map<string, Received[]>()
  for (const r of received) byWebhookId.set(webhookId(r), [...byWebhookId.get(webhookId(r)) ?? [], r])
  const webhookIdsOf = new Map<string, Set<string>>()
  for (const [id, attempts] of byWebhookId) {
    const bodies = new Set(attempts.map((r) => r.body))
    t.equal(bodies.size, 1, `${id}: the same body on every attempt`)
    const plant = plantIdOf(attempts[0].body)
    webhookIdsOf.set(plant, new Set([...webhookIdsOf.get(plant) ?? [], id]))
  }
  t.same([...webhookIdsOf.keys()].filter((id) => !stored.has(id)), [], 'no plant announced that was not stored')
  t.same([...webhookIdsOf].filter(([, ids]) => ids.size !== 1).map(([id]) => id), [], 'one webhook-id per plant')
  for (const r of received) {
    if (stored.get(plantIdOf(r.body)) !== r.body) t.fail(`body ${r.body} is not the plant's exact JSON`)
  }
  t.same(received.filter((r) => { try { receiver.verify(subscription.secret, r); return false } catch { return true } }).length, 0,
    `all ${received.length} requests verify with the secret`)

  const attemptedBefore = new Set(received.slice(0, before).map(webhookId))
  t.same([...attemptedBefore].filter((id) => !byWebhookId.get(id)!.some((r) => r.status === 200)), [],
    `each of the ${attemptedBefore.size} webhook-ids attempted before the crash delivered after it, under the same id`)
  // A 200 more than once: only for a delivery acknowledged before the crash whose record the crash lost.
  const twice = [...byWebhookId].filter(([, attempts]) => attempts.filter((r) => r.status === 200).length > 1)
  t.same(twice.filter(([id]) => !received.slice(0, before).some((r) => webhookId(r) === id && r.status === 200)).map(([id]) => id), [],
    'no delivery acknowledged twice, but one the crash may have left unrecorded')

  t.equal(log.length, stored.size, 'one delivery per stored plant in the log')
  t.same(log.filter((d) => d.status !== 'delivered' || d.lastStatusCode !== 200), [], 'each delivered, with a 200')
  t.same(new Set(log.map((d) => d.plantId)), new Set(stored.keys()), 'the log names each plant, its id exact')
  t.same(new Set(log.map((d) => d.id)), new Set(byWebhookId.keys()), 'the log ids are the webhook-ids sent')
}
