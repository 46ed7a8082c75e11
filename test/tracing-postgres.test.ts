import type { LookupAddress } from 'node:dns'
import { SpanKind } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import t from 'tap'
import { exporter, everythingRecorded, idsOf, linksOf, parentOf, traceOf, traceparent } from './helpers/tracing.ts'
import { SPAN } from '../src/tracing/spans.ts'

// A PostgreSQL create traced: pg is imported (from ESM) after the SDK started, and the
// instrumentation must really have patched it: its statement spans sit under the batch.
// Its delivery, by another instance, links to it.

const { AUTH, postPlant, testApp } = await import('./helpers/app.ts')
const { postgresUnavailable, startPostgres } = await import('./helpers/postgres-cluster.ts')
const { startReceiver } = await import('./helpers/receiver.ts')
const { retryUntil } = await import('./helpers/wait.ts')

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const CALLER_SPAN = '00f067aa0ba902b7'

t.test('tracing on PostgreSQL', { skip: postgresUnavailable() }, async (t) => {
  const server = await startPostgres(t)

  t.test('a create: its statement is a child of the batch commit, recorded without its values; so is a delete\'s script', async (t) => {
    const app = await testApp(t, { DATABASE_URL: await server.createDatabase('tracing') })
    exporter.reset()
    const res = await postPlant(app, { id: 1, name: 'Ficus lyrata' }, { ...AUTH, traceparent: traceparent(CALLER_TRACE, CALLER_SPAN) })
    t.equal(res.statusCode, 200)
    const spans = traceOf(CALLER_TRACE)
    const [request] = spans.filter((span) => span.name === 'request')
    t.equal(parentOf(request), CALLER_SPAN, 'the caller\'s trace continues')
    const [batch] = spans.filter((span) => span.name === SPAN.batch)
    t.ok(batch, 'a batch commit span')
    const statements = spans.filter((span) => span.attributes['db.system.name'] === 'postgresql')
    t.ok(statements.length > 0, 'pg was patched: its statements are traced')
    // A connection opened for the batch (the pool's other one busy) is a child of the pool's connect.
    const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]))
    const ancestors = (span: ReadableSpan): string[] => {
      const parent = byId.get(parentOf(span) ?? '')
      return parent === undefined ? [] : [parent.spanContext().spanId, ...ancestors(parent)]
    }
    for (const statement of statements) {
      t.ok(ancestors(statement).includes(batch.spanContext().spanId), `${statement.name} is within the batch`)
      t.equal(statement.kind, SpanKind.CLIENT)
    }
    const [create] = statements.filter((span) => span.attributes['db.query.text'] !== undefined)
    t.match(create.attributes['db.query.text'], /^WITH events_lock AS .*unnest\(\?, \?, \?, \?, \?\).*INSERT INTO plants .*INSERT INTO webhook_events .*INSERT INTO webhook_deliveries/s,
      'the create\'s one statement writes the plant and its outbox, recorded with its values as ?')
    t.match(create.name, /^pg\.query:WITH tracing$/, 'named for what it does, not for the timeout set before it')

    const DELETE_CALLER = 'a'.repeat(32)
    t.equal((await app.inject({ method: 'DELETE', url: '/plants/1', headers: { ...AUTH, traceparent: traceparent(DELETE_CALLER, CALLER_SPAN) } })).statusCode, 204)
    const texts = traceOf(DELETE_CALLER).map((span) => span.attributes['db.query.text']).filter((text) => text !== undefined)
    t.match(texts, ['SELECT id, name, tag FROM plants WHERE id = ?', /^SELECT pg_advisory_xact_lock\(\d+\);\s+WITH batch \(id, name, tag\) AS \(VALUES \(\?, \?, NULL::bytea\)\)/],
      'the read before it, and the delete script, recorded without their values')
    t.notOk(everythingRecorded().includes(Buffer.from('Ficus lyrata').toString('hex')), 'the plant name is in no span, hex-encoded either')
    t.notOk(everythingRecorded().includes('Ficus lyrata'), 'nor as it is')
  })

  t.test('a create taken by one instance and delivered by another links to the create', async (t) => {
    const database = await server.createDatabase('tracing_link')
    const receiver = await startReceiver(t)
    // The receiver's name resolves for the instance that delivers, never for the one that creates.
    const host = 'receiver.test'
    const resolves = async (): Promise<LookupAddress[]> => [{ address: '127.0.0.1', family: 4 }]
    const fails = async (): Promise<LookupAddress[]> => { throw Object.assign(new Error(`${host} not found`), { code: 'ENOTFOUND' }) }
    const env = { DATABASE_URL: database, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '1' }
    const creating = await testApp(t, env, { resolve: fails })
    const delivering = await testApp(t, env, { resolve: resolves })
    await delivering.ready()
    const url = receiver.url.replace('127.0.0.1', host)
    t.equal((await delivering.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url } })).statusCode, 201)
    const CREATE = 'c'.repeat(32)
    t.equal((await postPlant(creating, { id: -7, name: 'Ficus' }, { ...AUTH, traceparent: traceparent(CREATE, CALLER_SPAN) })).statusCode, 200)
    const [create] = traceOf(CREATE).filter((span) => span.name.startsWith('handler - '))
    // Its attempt, if it made one, failed and is due again at once; the other instance takes it.
    await creating.close()
    const [received] = await receiver.waitFor(1)
    t.equal(received.body, '{"id":-7,"name":"Ficus"}', 'delivered by the other instance, the only one that reaches the receiver')
    const { value: [attempt] } = await retryUntil(async () => exporter.getFinishedSpans().filter((span) => span.name === SPAN.attempt && span.attributes['plant_store.delivery.delivered'] === true),
      (spans) => spans.length > 0, 5000, 10)
    t.same(linksOf(attempt), [idsOf(create)], 'its attempt links to the create, read from the event')
  })
})
