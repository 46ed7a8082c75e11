import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { AUTH, assertError, postPlant, testApp } from './app.ts'
import { startReceiver } from './receiver.ts'
import { putPlant } from './update-suite.ts'
import { retryUntil } from './wait.ts'

// The plant's life-cycle events through webhooks (issue #46), on each store engine.

async function subscribe (app: FastifyInstance, url: string, events?: string[]) {
  return await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: events === undefined ? { url } : { url, events } })
}

async function remove (app: FastifyInstance, id: string | number) {
  return await app.inject({ method: 'DELETE', url: `/plants/${id}`, headers: AUTH })
}

async function deliveries (app: FastifyInstance, id: string): Promise<Array<Record<string, any>>> {
  return (await app.inject({ url: `/webhooks/${id}/deliveries?limit=100`, headers: AUTH })).json()
}

export function eventsSuite (t: Test, databaseUrl: (t: Test) => Promise<string>): void {
  const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '50' }

  t.test('a subscription to every event gets created, updated, deleted in order; a default one only created; a no-op nothing', async (t) => {
    const app = await testApp(t, { ...ENV, DATABASE_URL: await databaseUrl(t) })
    const all = await startReceiver(t)
    const created = await startReceiver(t)
    const everything = await subscribe(app, all.url, ['plant.created', 'plant.updated', 'plant.deleted'])
    t.equal(everything.statusCode, 201)
    t.same(everything.json().events, ['plant.created', 'plant.updated', 'plant.deleted'], 'shown on the subscription')
    const byDefault = await subscribe(app, created.url)
    t.same(byDefault.json().events, ['plant.created'], 'the default is plant.created alone')

    await postPlant(app, '{"id":9007199254740993,"name":"Fern","tag":"shade"}')
    await all.waitFor(1)
    t.equal((await putPlant(app, '9007199254740993', { name: 'Fern', tag: 'shade' })).statusCode, 200, 'a no-op update')
    t.equal((await putPlant(app, '9007199254740993', { name: 'Boston fern' })).statusCode, 200)
    await all.waitFor(2)
    t.equal((await remove(app, '9007199254740993')).statusCode, 204)
    await all.waitFor(3)
    await created.waitFor(1)
    // Time for a wrongly announced no-op, or an event the default subscription did not choose, to arrive.
    await new Promise((resolve) => setTimeout(resolve, 300))

    const secret = everything.json().secret
    for (const received of all.received) all.verify(secret, received)
    t.same(all.received.map(({ body }) => body), [
      '{"id":9007199254740993,"name":"Fern","tag":"shade"}',
      '{"type":"plant.updated","id":9007199254740993,"old":{"name":"Fern","tag":"shade"},"new":{"name":"Boston fern"}}',
      '{"type":"plant.deleted","id":9007199254740993,"name":"Boston fern"}'
    ], 'each event once, in order, signed, the id exact; the no-op announced nothing')
    t.same(created.received.map(({ body }) => body), ['{"id":9007199254740993,"name":"Fern","tag":"shade"}'], 'the default subscription: created only, as before')
    t.same((await deliveries(app, everything.json().id)).map((d) => d.event), ['plant.deleted', 'plant.updated', 'plant.created'],
      'the delivery log names each event, newest first')
  })

  t.test('a plant\'s events are not attempted while an earlier one of it is pending; its deletion fails the earlier ones', async (t) => {
    const app = await testApp(t, { ...ENV, DATABASE_URL: await databaseUrl(t) })
    // Down for the first attempts: the created delivery is retried while the update waits behind it.
    const receiver = await startReceiver(t, (n) => n < 2 ? 503 : 200)
    const subscribed = (await subscribe(app, receiver.url, ['plant.created', 'plant.updated'])).json()
    await postPlant(app, { id: 1, name: 'a' })
    await putPlant(app, 1, { name: 'b' })
    await putPlant(app, 1, { name: 'c' })
    await receiver.waitFor(5)
    await new Promise((resolve) => setTimeout(resolve, 200))
    t.same(receiver.received.map(({ body }) => JSON.parse(body).new?.name ?? JSON.parse(body).name), ['a', 'a', 'a', 'b', 'c'],
      'the update waits until the create is delivered, retries included')

    // Never acknowledged: the deletion (not chosen here) fails what is still pending of the plant.
    receiver.answer(() => 503)
    await postPlant(app, { id: 2, name: 'x' })
    await putPlant(app, 2, { name: 'y' })
    t.equal((await remove(app, 2)).statusCode, 204)
    const { value: log } = await retryUntil(async () => await deliveries(app, subscribed.id),
      (list) => list.filter((d) => d.plantId === 2).every((d) => d.status === 'failed'), 5000, 20)
    t.same(log.filter((d) => d.plantId === 2).map((d) => [d.event, d.status, d.lastError]),
      [['plant.updated', 'failed', 'plant deleted'], ['plant.created', 'failed', 'plant deleted']])
    t.notOk(receiver.received.some(({ body }) => body.includes('"y"')), 'the update of the deleted plant was never sent')
  })

  t.test('events must be known, at least one, each once', async (t) => {
    const app = await testApp(t, { ...ENV, DATABASE_URL: await databaseUrl(t) })
    for (const events of [[], ['plant.moved'], ['plant.created', 'plant.created']]) {
      assertError(t, await subscribe(app, 'http://127.0.0.1:9/hook', events), 400, 'invalid_body')
    }
  })
}
