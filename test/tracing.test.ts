import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import t, { type Test } from 'tap'
import { exporter, everythingRecorded, idsOf, linksOf, parentOf, traceOf, traceparent } from './helpers/tracing.ts'
import { tracingWanted } from '../src/tracing/wanted.ts'
import { BATCH_SIZE, SPAN } from '../src/tracing/spans.ts'

// The span trees of a create, a conflict and a read, in-process, into memory; the link of
// a delivery attempt to its create; the attributes recorded, none of them a secret.

// Imported after tracing started (helpers/tracing.ts): the SDK patches pg as it loads.
const { AUTH, postPlant, testApp, TOKEN } = await import('./helpers/app.ts')
const { startReceiver } = await import('./helpers/receiver.ts')
const { retryUntil } = await import('./helpers/wait.ts')
const { GroupCommit } = await import('../src/store/group-commit.ts')

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c'
const CALLER_SPAN = 'b7ad6b7169203331'
const HANDLER = 'handler - '

function named (spans: ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((span) => span.name === name || (name === HANDLER && span.name.startsWith(HANDLER)))
}

function one (t: Test, spans: ReadableSpan[], name: string): ReadableSpan {
  const found = named(spans, name)
  t.equal(found.length, 1, `one '${name}' span`)
  return found[0]
}

/** The request span and its handler's, the request continuing the caller's trace. */
function requestOf (t: Test, spans: ReadableSpan[], status: number): { request: ReadableSpan, handler: ReadableSpan } {
  const request = one(t, spans, 'request')
  t.equal(parentOf(request), CALLER_SPAN, 'the request span continues the caller\'s traceparent')
  t.equal(request.kind, SpanKind.SERVER)
  t.equal(request.attributes['http.response.status_code'], status)
  const handler = one(t, spans, HANDLER)
  t.equal(parentOf(handler), request.spanContext().spanId, 'the handler is a child of the request')
  return { request, handler }
}

const traced = { ...AUTH, traceparent: traceparent(CALLER_TRACE, CALLER_SPAN) }

t.beforeEach(() => exporter.reset())

t.test('tracing is on only when an exporter is configured by the standard variables', async (t) => {
  t.notOk(tracingWanted({}), 'nothing set: off')
  t.ok(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }))
  t.ok(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }))
  t.ok(tracingWanted({ OTEL_TRACES_EXPORTER: 'console' }))
  t.notOk(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' }))
  t.notOk(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }))
  t.notOk(tracingWanted({ OTEL_SERVICE_NAME: 'plants', OTEL_TRACES_SAMPLER: 'always_on' }), 'no exporter: off')
})

t.test('a create: the request, its wait in the group-commit queue, the batch commit it links to, the outbox write', async (t) => {
  const app = await testApp(t)
  const res = await postPlant(app, { id: 1, name: 'Ficus' }, traced)
  t.equal(res.statusCode, 200)
  const spans = traceOf(CALLER_TRACE)
  const { handler } = requestOf(t, spans, 200)
  const wait = one(t, spans, SPAN.wait)
  const batch = one(t, spans, SPAN.batch)
  const outbox = one(t, spans, SPAN.outbox)
  t.equal(parentOf(wait), handler.spanContext().spanId, 'the wait is a child of the handler')
  t.equal(parentOf(batch), handler.spanContext().spanId, 'the batch opened by this request is a child of its handler')
  t.equal(parentOf(outbox), batch.spanContext().spanId, 'the outbox is written inside the batch')
  t.same(wait.links.map((link) => link.context.spanId), [batch.spanContext().spanId], 'the wait links to its batch')
  t.equal(batch.attributes[BATCH_SIZE], 1)
  const ns = ([seconds, nanoseconds]: [number, number]): number => seconds * 1e9 + nanoseconds
  t.ok(ns(batch.startTime) <= ns(wait.endTime) && ns(wait.endTime) <= ns(batch.endTime), 'the wait ends as the batch starts')
})

t.test('creates that share a batch all link to its one span, which says how many it served', async (t) => {
  const app = await testApp(t)
  const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) => await postPlant(app, { id: i + 1, name: `plant ${i}` }, AUTH)))
  t.ok(answers.every((res) => res.statusCode === 200), 'all created')
  const spans = exporter.getFinishedSpans()
  const waits = named(spans, SPAN.wait)
  const batches = new Map(named(spans, SPAN.batch).map((batch) => [batch.spanContext().spanId, batch]))
  t.equal(waits.length, 20, 'a wait per create')
  let served = 0
  for (const batch of batches.values()) {
    const linking = waits.filter((wait) => wait.links.some((link) => link.context.spanId === batch.spanContext().spanId))
    t.equal(batch.attributes[BATCH_SIZE], linking.length, 'its size is the number of waits linked to it')
    t.same(batch.links.map((link) => link.context.spanId).sort(), linking.map((wait) => wait.spanContext().spanId).sort(), 'it links back to each')
    served += linking.length
  }
  t.equal(served, 20, 'every wait links to one batch')
})

t.test('a conflict: the same tree, a 409, and no outbox write', async (t) => {
  const app = await testApp(t)
  t.equal((await postPlant(app, { id: 7, name: 'Ficus' })).statusCode, 200)
  exporter.reset()
  t.equal((await postPlant(app, { id: 7, name: 'Monstera' }, traced)).statusCode, 409)
  const spans = traceOf(CALLER_TRACE)
  requestOf(t, spans, 409)
  one(t, spans, SPAN.wait)
  one(t, spans, SPAN.batch)
  t.same(named(spans, SPAN.outbox), [], 'nothing announced')
})

t.test('a read: the request and its handler, no commit', async (t) => {
  const app = await testApp(t)
  t.equal((await postPlant(app, { id: 3, name: 'Ficus' })).statusCode, 200)
  exporter.reset()
  const res = await app.inject({ method: 'GET', url: '/plants/3', headers: traced })
  t.equal(res.statusCode, 200)
  const spans = traceOf(CALLER_TRACE)
  requestOf(t, spans, 200)
  t.same(spans.map((span) => span.name).filter((name) => name.startsWith('group-commit')), [], 'a read waits for no commit')
})

t.test('a delivery attempt is a trace of its own, linked to its create, and sends its traceparent to the receiver', async (t) => {
  const app = await testApp(t, { WEBHOOK_ALLOW_PRIVATE: 'true' })
  const receiver = await startReceiver(t)
  t.equal((await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: receiver.url } })).statusCode, 201)
  t.equal((await postPlant(app, { id: 42, name: 'Ficus' }, traced)).statusCode, 200)
  const [received] = await receiver.waitFor(1)
  const create = one(t, traceOf(CALLER_TRACE), HANDLER)
  const [, traceId, spanId] = String(received.headers.traceparent).split('-')
  t.not(traceId, CALLER_TRACE, 'the attempt is not in the create\'s trace')
  // Ended once the answer is read: a moment after the receiver has it.
  const { value: attemptTrace } = await retryUntil(async () => traceOf(traceId), (spans) => named(spans, SPAN.attempt).length > 0, 5000, 10)
  const attempt = one(t, attemptTrace, SPAN.attempt)
  t.equal(parentOf(attempt), undefined, 'a root')
  t.same(linksOf(attempt), [idsOf(create)], 'linked to the create')
  t.match(attempt.attributes, { 'plant_store.delivery.attempt': 1, 'http.response.status_code': 200, 'plant_store.delivery.delivered': true })
  const post = one(t, attemptTrace, 'POST')
  t.equal(parentOf(post), attempt.spanContext().spanId, 'undici\'s span is the attempt\'s child')
  t.equal(spanId, post.spanContext().spanId, 'the receiver\'s traceparent names undici\'s span')
})

t.test('a batch refused is split: each try a batch span, the failed ones marked with the error\'s class, each wait ended once', async (t) => {
  const commit = new GroupCommit<string, string>({
    write: (items) => {
      if (items.includes('bad')) throw new TypeError('refused: bad')
      return items
    },
    sizeOf: () => 1,
    maxBatch: 10,
    maxQueueBytes: 1000
  })
  await trace.getTracer('test').startActiveSpan('caller', async (caller) => {
    const results = await Promise.allSettled(['good', 'bad'].map(async (item) => await commit.submit(item)))
    t.same(results.map((result) => result.status), ['fulfilled', 'rejected'])
    caller.end()
  })
  const spans = exporter.getFinishedSpans()
  const batches = named(spans, SPAN.batch)
  t.same(batches.map((batch) => batch.attributes[BATCH_SIZE]).sort(), [1, 1, 2], 'the pair, then each alone')
  t.same(batches.filter((batch) => batch.status.code === SpanStatusCode.ERROR).map((batch) => batch.attributes['error.type']), ['TypeError', 'TypeError'],
    'the pair and the bad one failed, by class; no message')
  const waits = named(spans, SPAN.wait)
  t.equal(waits.length, 2)
  t.ok(waits.every((wait) => wait.links.length === 1), 'each wait linked to the first try only')
})

t.test('an attempt that fails says so: not delivered, the receiver\'s status, an error status', async (t) => {
  const app = await testApp(t, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_MAX_ATTEMPTS: '1' })
  const receiver = await startReceiver(t, () => 503)
  t.equal((await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: receiver.url } })).statusCode, 201)
  t.equal((await postPlant(app, { id: 9, name: 'Ficus' })).statusCode, 200)
  await receiver.waitFor(1)
  const { value: [attempt] } = await retryUntil(async () => named(exporter.getFinishedSpans(), SPAN.attempt), (spans) => spans.length > 0, 5000, 10)
  t.match(attempt.attributes, { 'plant_store.delivery.attempt': 1, 'http.response.status_code': 503, 'plant_store.delivery.delivered': false })
  t.equal(attempt.status.code, SpanStatusCode.ERROR)
})

// Every attribute the service's spans may carry: docs/production.md lists them.
const ATTRIBUTES = [
  'fastify.root', 'http.request.method', 'url.path', 'url.query', 'http.route', 'http.response.status_code',
  'hook.name', 'fastify.type', 'hook.callback.name',
  BATCH_SIZE, 'error.type',
  'plant_store.webhook.id', 'plant_store.delivery.id', 'plant_store.delivery.attempt', 'plant_store.delivery.delivered',
  'http.request.method_original', 'url.full', 'url.scheme', 'server.address', 'server.port', 'user_agent.original',
  'network.peer.address', 'network.peer.port', 'network.protocol.version',
  'db.system.name', 'db.namespace', 'db.query.text'
]

t.test('no token, secret or plant name in any span, and only the attributes listed', async (t) => {
  const app = await testApp(t, { WEBHOOK_ALLOW_PRIVATE: 'true' })
  const receiver = await startReceiver(t)
  const NAME = 'Secretly named plant'
  const subscribed = await app.inject({ method: 'POST', url: `/webhooks?access_token=${TOKEN}`, headers: AUTH, payload: { url: `${receiver.url}/secret-path?key=receiver-secret` } })
  t.equal(subscribed.statusCode, 400, 'a token in the query is refused')
  const { secret } = (await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: `${receiver.url}/secret-path?key=receiver-secret` } })).json()
  t.equal((await postPlant(app, { id: 5, name: NAME, tag: 'secret tag' })).statusCode, 200)
  t.equal((await postPlant(app, { id: 5, name: `${NAME}, again` })).statusCode, 409)
  // A parser's message may quote the body: the span's status says the Error's code instead.
  const broken = await postPlant(app, `{"id":6,"${NAME}":1,"${NAME}":2}`)
  t.equal(broken.statusCode, 400)
  t.match(broken.json().message, NAME, 'the answer\'s message quotes the body')
  t.equal((await app.inject({ method: 'GET', url: `/plants?access_token=${TOKEN}&limit=1`, headers: AUTH })).statusCode, 400)
  t.equal((await app.inject({ method: 'DELETE', url: '/plants/5', headers: AUTH })).statusCode, 204)
  await receiver.waitFor(1)
  await retryUntil(async () => named(exporter.getFinishedSpans(), SPAN.attempt), (spans) => spans.length > 0, 5000, 10)
  const recorded = everythingRecorded()
  for (const secretThing of [TOKEN, secret, secret.slice('whsec_'.length), NAME, 'secret tag', 'secret-path', 'receiver-secret']) {
    t.notOk(recorded.includes(secretThing), `'${secretThing}' is in no span`)
  }
  t.ok(recorded.includes('access_token=[redacted]'), 'the query\'s token is redacted as the request log does')
  const keys = new Set(exporter.getFinishedSpans().flatMap((span) => Object.keys(span.attributes)))
  t.same([...keys].filter((key) => !ATTRIBUTES.includes(key)), [], 'every attribute is one listed')
})
