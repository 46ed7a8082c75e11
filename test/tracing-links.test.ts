import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import t, { type Test } from 'tap'
import { exporter, idsOf, linksOf, traceOf, traceparent } from './helpers/tracing.ts'
import { SPAN } from '../src/tracing/spans.ts'

// A delivery attempt links to the change that caused it through the trace context kept
// with the change's event: after a restart, for any id, for updates and deletes.
// Another instance's deliveries: tracing-postgres.test.ts; another process's: system/tracing.

const { AUTH, postPlant, testApp } = await import('./helpers/app.ts')
const { startReceiver } = await import('./helpers/receiver.ts')
const { retryUntil } = await import('./helpers/wait.ts')
const { postgresUnavailable, startPostgres } = await import('./helpers/postgres-cluster.ts')

const CALLER_SPAN = 'b7ad6b7169203331'
const HANDLER = 'handler - '

/** The handler span of the request made with this trace id. */
function handlerOf (traceId: string): ReadableSpan {
  const [handler] = traceOf(traceId).filter((span) => span.name.startsWith(HANDLER))
  return handler
}

/** Resolves with the attempt spans ended so far that pass `which`, once there is one. */
async function attempts (which: (attempt: ReadableSpan) => boolean): Promise<ReadableSpan[]> {
  const { value } = await retryUntil(async () => exporter.getFinishedSpans().filter((span) => span.name === SPAN.attempt && which(span)),
    (spans) => spans.length > 0, 10_000, 10)
  return value
}

const delivered = (span: ReadableSpan): boolean => span.attributes['plant_store.delivery.delivered'] === true

t.beforeEach(() => exporter.reset())

t.test('a delivery made after a restart on the same SQLite file links to its create, a negative id\'s too', async (t) => {
  const env = { DATABASE_URL: `sqlite:${t.testdir()}/plants.db`, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '1' }
  const receiver = await startReceiver(t, () => 503)
  const CREATE = '1'.repeat(32)
  const first = await testApp(t, env)
  t.equal((await first.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: receiver.url } })).statusCode, 201)
  t.equal((await postPlant(first, '{"id":-9007199254740993,"name":"Ficus"}', { traceparent: traceparent(CREATE, CALLER_SPAN) })).statusCode, 200)
  const create = handlerOf(CREATE)
  const [failed] = await attempts((span) => !delivered(span))
  t.same(linksOf(failed), [idsOf(create)], 'the first instance\'s attempt links to the create')
  await first.close()

  receiver.answer(() => 200)
  exporter.reset()
  // Ready, its dispatcher starts, and finds the delivery due.
  await (await testApp(t, env)).ready()
  const [attempt] = await attempts(delivered)
  t.same(linksOf(attempt), [idsOf(create)], 'the attempt after the restart links to the create, read from its event')
  t.equal(receiver.received.at(-1)?.body, '{"id":-9007199254740993,"name":"Ficus"}')
})

/** An update's and a delete's deliveries, on the store at `url`, each link to the request that made it. */
async function changesLink (t: Test, url: string): Promise<void> {
  const app = await testApp(t, { WEBHOOK_ALLOW_PRIVATE: 'true', DATABASE_URL: url })
  const receiver = await startReceiver(t)
  const subscribed = await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: receiver.url, events: ['plant.updated', 'plant.deleted'] } })
  t.equal(subscribed.statusCode, 201)
  t.equal((await postPlant(app, { id: 5, name: 'Ficus' })).statusCode, 200)
  const UPDATE = '2'.repeat(32)
  const DELETE = '3'.repeat(32)
  const headers = (traceId: string): Record<string, string> => ({ ...AUTH, traceparent: traceparent(traceId, CALLER_SPAN) })
  t.equal((await app.inject({ method: 'PUT', url: '/plants/5', headers: headers(UPDATE), payload: { name: 'Monstera' } })).statusCode, 200)
  // Delivered before the delete, which would fail it (its payload erased).
  await receiver.waitFor(1)
  t.equal((await app.inject({ method: 'DELETE', url: '/plants/5', headers: headers(DELETE) })).statusCode, 204)
  await receiver.waitFor(2)
  const { value: sent } = await retryUntil(async () => exporter.getFinishedSpans().filter((span) => span.name === SPAN.attempt), (spans) => spans.length === 2, 5000, 10)
  const linked = sent.map(linksOf).sort()
  t.same(linked, [[idsOf(handlerOf(UPDATE))], [idsOf(handlerOf(DELETE))]].sort(), 'each attempt links to its own change\'s request')
}

t.test('on SQLite, the deliveries of an update and of a delete each link to the request that made it', async (t) => {
  await changesLink(t, 'memory:')
})

t.test('on PostgreSQL, the deliveries of an update and of a delete each link to the request that made it', { skip: postgresUnavailable() }, async (t) => {
  await changesLink(t, await (await startPostgres(t)).createDatabase('links'))
})

t.test('an untraced change keeps no trace context: its delivery links to nothing', async (t) => {
  const app = await testApp(t, { WEBHOOK_ALLOW_PRIVATE: 'true' })
  const receiver = await startReceiver(t)
  t.equal((await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: receiver.url } })).statusCode, 201)
  // A caller that did not sample: the request is not recorded.
  t.equal((await postPlant(app, { id: 8, name: 'Ficus' }, { traceparent: `00-${'4'.repeat(32)}-${CALLER_SPAN}-00` })).statusCode, 200)
  await receiver.waitFor(1)
  const [attempt] = await attempts(() => true)
  t.same(attempt.links, [], 'no link')
})
