import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { postgresUnavailable, startPostgres } from '../helpers/postgres-cluster.ts'
import { startOtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { startServer } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'

// The service as operators run it: tracing configured by OTEL_* variables alone, spans
// exported to a real OTLP/HTTP receiver; off (and nothing of OpenTelemetry loaded) without.

const IMPORTS = new URL('../fixtures/otel-imports.mjs', import.meta.url).pathname
const REPORTING = { NODE_OPTIONS: `--import=${IMPORTS}`, API_TOKENS: TOKEN }
// Exported within 50 ms rather than 5 s: the test waits for them.
const PROMPT = { OTEL_BSP_SCHEDULE_DELAY: '50' }
const CALLER_TRACE = '5b8efff798038103d269b633813fc60c'
const CALLER_SPAN = 'eee19b7ec3c1b174'
const TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`

const otelImports = (stderr: string[]): string[] => stderr.filter((line) => line.startsWith('otel-import: '))

t.test('off without an exporter configured: nothing of OpenTelemetry is imported, and no traceparent is sent', async (t) => {
  const receiver = await startReceiver(t)
  const offs = [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_EXPORTER: 'none' }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SDK_DISABLED: 'true' }]
  await Promise.all(offs.map(async (env, i) => {
    const server = await startServer(t, { ...REPORTING, ...env, WEBHOOK_ALLOW_PRIVATE: 'true' })
    const what = JSON.stringify(env)
    if (i === 0) t.equal((await server.request('POST', '/webhooks', { body: { url: receiver.url } })).statusCode, 201)
    t.equal((await server.request('POST', '/plants', { body: { id: 1, name: 'Ficus' }, headers: { traceparent: TRACEPARENT } })).statusCode, 200)
    if (i === 0) {
      const [received] = await receiver.waitFor(1)
      t.equal(received.headers.traceparent, undefined, 'no traceparent to the receiver')
    }
    t.same(otelImports(server.stderr), [], `${what}: no OpenTelemetry SDK module imported`)
    t.notOk(server.stdout.some((line) => line.includes('"trace_id"')), `${what}: no trace ids in the log`)
  }))
})

t.test('on with OTEL_* variables alone: a create\'s spans reach an OTLP/HTTP receiver (OTLP/JSON), its log lines carry its ids, its delivery sends the traceparent of its trace', async (t) => {
  const otlp = await startOtlpReceiver(t)
  const receiver = await startReceiver(t)
  const server = await startServer(t, {
    ...REPORTING,
    ...PROMPT,
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'plant-store-under-test',
    WEBHOOK_ALLOW_PRIVATE: 'true'
  })
  t.ok(otelImports(server.stderr).length > 0, 'the SDK is imported (the check above sees imports)')
  t.equal((await server.request('POST', '/webhooks', { body: { url: receiver.url } })).statusCode, 201)
  t.equal((await server.request('POST', '/plants', { body: { id: 77, name: 'Ficus' }, headers: { traceparent: TRACEPARENT } })).statusCode, 200)

  const ofCreate = (spans: ReceivedSpan[]): ReceivedSpan[] => spans.filter((span) => span.traceId === CALLER_TRACE)
  const { value: create } = await retryUntil(async () => ofCreate(otlp.spans), (spans) => spans.some((span) => span.name === 'request'), 10_000, 20)
  const names = create.map((span) => span.name)
  for (const name of ['request', 'group-commit wait', 'group-commit batch', 'outbox write']) t.ok(names.includes(name), `the create's trace has '${name}'`)
  t.ok(names.some((name) => name.startsWith('handler - ')), 'and its handler')
  const request = create.find((span) => span.name === 'request')!
  t.equal(request.parentSpanId, CALLER_SPAN, 'the caller\'s traceparent is honoured')
  t.equal(request.service, 'plant-store-under-test', 'OTEL_SERVICE_NAME names the service')

  // Written within the log's flush interval.
  const { value: line } = await retryUntil(async () => server.stdout.map((text) => JSON.parse(text)).find((entry) => entry.msg === 'request completed' && entry.url === '/plants'),
    (entry) => entry !== undefined, 5000, 20)
  t.match(line, { trace_id: CALLER_TRACE, span_id: request.spanId }, 'the request\'s log line carries its trace and span ids')

  const [received] = await receiver.waitFor(1)
  const [, traceId] = String(received.headers.traceparent).split('-')
  const { value: delivery } = await retryUntil(async () => otlp.spans.filter((span) => span.traceId === traceId && span.name === 'webhook delivery'),
    (spans) => spans.length > 0, 10_000, 20)
  t.equal(delivery.length, 1, 'the receiver\'s traceparent is of the delivery attempt\'s trace, exported too')
  t.same(delivery[0].links.map((link) => link.traceId), [CALLER_TRACE], 'which links to the create\'s trace')
  t.match(delivery[0].attributes, { 'plant_store.delivery.attempt': 1, 'http.response.status_code': 200 })
})

t.test('a delivery made by the next process on the same SQLite file still links to its create, read from its event', async (t) => {
  const otlp = await startOtlpReceiver(t)
  const receiver = await startReceiver(t, () => 503)
  const env = {
    API_TOKENS: TOKEN,
    ...PROMPT,
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    DATABASE_URL: `sqlite:${t.testdir()}/plants.db`,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_BASE_MS: '1'
  }
  const first = await startServer(t, env)
  t.equal((await first.request('POST', '/webhooks', { body: { url: receiver.url } })).statusCode, 201)
  t.equal((await first.request('POST', '/plants', { body: { id: 78, name: 'Ficus' }, headers: { traceparent: TRACEPARENT } })).statusCode, 200)
  await receiver.waitFor(1)
  first.child.kill('SIGTERM')
  t.equal(await first.exited, 0, 'the first process stopped, its delivery not made')
  receiver.answer(() => 200)
  await startServer(t, env)
  const { value: delivered } = await retryUntil(async () => otlp.spans.filter((span) => span.name === 'webhook delivery' && span.attributes['plant_store.delivery.delivered'] === true),
    (spans) => spans.length > 0, 10_000, 20)
  const handler = otlp.spans.find((span) => span.traceId === CALLER_TRACE && span.name.startsWith('handler - '))
  t.ok(handler, 'the create\'s handler span, exported by the first process')
  t.same(delivered.map((span) => span.links), [[{ traceId: CALLER_TRACE, spanId: handler?.spanId }]], 'the second process\'s attempt links to it')
})

t.test('on PostgreSQL, the service as started patches pg (imported after the SDK): a create\'s statement is in its trace', { skip: postgresUnavailable() }, async (t) => {
  const otlp = await startOtlpReceiver(t)
  const database = await startPostgres(t)
  const server = await startServer(t, {
    API_TOKENS: TOKEN,
    ...PROMPT,
    DATABASE_URL: await database.createDatabase('tracing'),
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json'
  })
  t.equal((await server.request('POST', '/plants', { body: { id: 1, name: 'Ficus' }, headers: { traceparent: TRACEPARENT } })).statusCode, 200)
  // The batch ends after its statements, so it may be exported in a later export than they are.
  const { value: [batch, statements] } = await retryUntil(async () => [
    otlp.spans.find((span) => span.traceId === CALLER_TRACE && span.name === 'group-commit batch'),
    otlp.spans.filter((span) => span.traceId === CALLER_TRACE && span.attributes['db.system.name'] === 'postgresql')
  ] as const, ([batch, statements]) => batch !== undefined && statements.some((span) => span.parentSpanId === batch.spanId), 20_000, 20)
  t.ok(batch, 'the batch commit\'s span')
  t.ok(statements.some((span) => span.parentSpanId === batch?.spanId), 'a pg statement span, a child of the batch commit')
})

t.test('the default protocol (OTLP/HTTP protobuf) exports too', async (t) => {
  const otlp = await startOtlpReceiver(t)
  const server = await startServer(t, { API_TOKENS: TOKEN, ...PROMPT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.endpoint}/v1/traces` })
  t.equal((await server.request('POST', '/plants', { body: { id: 1, name: 'Ficus' }, headers: { traceparent: TRACEPARENT } })).statusCode, 200)
  const traceId = Buffer.from(CALLER_TRACE, 'hex')
  const { value: exports } = await retryUntil(async () => otlp.exports, (all) => all.some((one) => one.body.includes(traceId)), 10_000, 20)
  const carrying = exports.find((one) => one.body.includes(traceId))!
  t.equal(carrying.path, '/v1/traces')
  t.equal(carrying.contentType, 'application/x-protobuf')
})

t.test('a collector that never answers does not hold the shutdown past its grace', async (t) => {
  const hanging = createServer(() => {})
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { hanging.closeAllConnections(); hanging.close() })
  const server = await startServer(t, {
    API_TOKENS: TOKEN,
    SHUTDOWN_GRACE_MS: '3000',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`,
    // Buffered until the shutdown sends them.
    OTEL_BSP_SCHEDULE_DELAY: '60000'
  })
  t.equal((await server.request('POST', '/plants', { body: { id: 1, name: 'Ficus' } })).statusCode, 200)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0, 'a clean exit within the grace, the spans given up')
})
