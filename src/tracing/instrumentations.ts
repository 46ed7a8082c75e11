import { FastifyOtelInstrumentation } from '@fastify/otel'
import type { Instrumentation } from '@opentelemetry/instrumentation'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici'
import type { FastifyRequest } from 'fastify'
import { loggedUrl } from '../log/request-log.ts'

// What the maintained instrumentations record, cut to what holds no secret and no plant
// name (docs/production.md lists every attribute): the tests read every span for them.

const REDACTED = '[redacted]'
const TIMEOUT = /^SET LOCAL statement_timeout = \d+; /
// A quoted literal, with the E of an escape string and the type it is cast to.
const LITERAL = /(?:\bE)?'(?:[^']|'')*'(?:::\w+(?:\[\])?)?/g

/** @fastify/otel, pg and undici, configured for this service. */
export function instrumentations (): Instrumentation[] {
  return [
    new FastifyOtelInstrumentation({
      // Added to every Fastify instance as it is made: first, so its span covers every hook.
      registerOnInitialization: true,
      // A span per hook would double a request's cost for little: the request and its handler.
      instrumentHooks: false,
      // An exception's message may quote the request; the span's status says it failed.
      recordExceptions: false,
      requestHook: (span, request: FastifyRequest) => span.setAttributes(urlAttributes(request.url))
    }),
    new PgInstrumentation({
      // The service's own statements only: the pool's upkeep and probes are not traced alone.
      requireParentSpan: true,
      enhancedDatabaseReporting: false,
      // A statement goes with its values written in, after the timeout of its transaction
      // (src/store/postgres/statement.ts): recorded and named as it reads without them.
      requestHook: (span, { query, connection }) => {
        const statement = query.text.replace(TIMEOUT, '').replace(LITERAL, '?')
        span.setAttribute('db.query.text', statement)
        span.updateName(`pg.query:${statement.split(/\s/, 1)[0].toUpperCase()} ${connection.database ?? ''}`.trimEnd())
      }
    }),
    new UndiciInstrumentation({
      requireParentforSpans: true,
      // A receiver's URL may carry its own secret, in its path (as Slack's do) or its query:
      // only the origin is recorded; the subscription's id is on the attempt's span.
      startSpanHook: (request) => ({
        'url.full': `${request.origin}/${REDACTED}`,
        'url.path': REDACTED,
        ...request.path.includes('?') ? { 'url.query': REDACTED } : {}
      })
    })
  ]
}

/** The request's path, and its query as the request log writes it (an access_token's value cut out). */
function urlAttributes (url: string): Record<string, string> {
  const query = url.indexOf('?')
  if (query === -1) return { 'url.path': url }
  return { 'url.path': url.slice(0, query), 'url.query': loggedUrl(url).slice(query + 1) }
}
