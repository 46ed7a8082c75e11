import {
  context, defaultTextMapGetter, defaultTextMapSetter, isSpanContextValid, ROOT_CONTEXT, SpanStatusCode, trace, type Context, type Span, type SpanContext
} from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import type { ServiceSpans } from './hooks.ts'

// A change's event keeps its request's span context as a W3C traceparent: plain text, readable
// by any instance and any later version.
const w3c = new W3CTraceContextPropagator()

function traceparentOf (span: Span): string | undefined {
  const carrier: Record<string, string> = {}
  w3c.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter)
  return carrier.traceparent
}

/** The span context a traceparent names, or undefined when it names none (malformed, or all zeros). */
function spanContextOf (traceparent: string): SpanContext | undefined {
  const named = trace.getSpanContext(w3c.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter))
  return named !== undefined && isSpanContextValid(named) ? named : undefined
}

// The service's own span names and attributes (docs/production.md lists them).
export const SPAN = {
  wait: 'group-commit wait',
  batch: 'group-commit batch',
  outbox: 'outbox write',
  attempt: 'webhook delivery'
} as const
export const BATCH_SIZE = 'plant_store.batch.size'

interface Wait { span: Span, parent: Context, ended: boolean }

/** The spans of src/tracing/hooks.ts, made with the tracer of the SDK started. */
export function serviceSpans (version: string): ServiceSpans {
  const tracer = trace.getTracer('plant-store', version)

  function recording (): Span | undefined {
    const span = trace.getSpan(context.active())
    return span?.isRecording() === true ? span : undefined
  }

  return {
    queued: () => {
      if (recording() === undefined) return undefined
      const parent = context.active()
      const span = tracer.startSpan(SPAN.wait, {}, parent)
      return { span, parent, ended: false } satisfies Wait
    },

    batch: async (waits, size, write) => {
      const served = waits.filter((wait): wait is Wait => wait !== undefined)
      // A batch of background writes only (the outbox's upkeep, attempts' records) is not traced.
      if (served.length === 0) return await write()
      // A child of the first request it serves, beside its wait; the others find it by their link.
      const { parent } = served[0]
      // One instant for the batch's start and the waits' end: each span's own clock is
      // anchored to its trace, and two anchors can differ by a fraction of a millisecond.
      const at = performance.timeOrigin + performance.now()
      const span = tracer.startSpan(SPAN.batch, {
        attributes: { [BATCH_SIZE]: size },
        links: served.map((wait) => ({ context: wait.span.spanContext() })),
        startTime: at
      }, parent)
      for (const wait of served) {
        // A split batch's halves: their waits ended with the first try.
        if (wait.ended) continue
        wait.span.addLink({ context: span.spanContext() })
        wait.span.end(at)
        wait.ended = true
      }
      try {
        return await context.with(trace.setSpan(parent, span), write)
      } catch (err) {
        // The error's name only: a message may quote what was written.
        span.setStatus({ code: SpanStatusCode.ERROR })
        span.setAttribute('error.type', err instanceof Error ? err.name : 'unknown')
        throw err
      } finally {
        span.end()
      }
    },

    outbox: (write) => {
      if (recording() === undefined) return write()
      return tracer.startActiveSpan(SPAN.outbox, (span) => {
        try {
          return write()
        } finally {
          span.end()
        }
      })
    },

    traceContext: () => {
      const span = recording()
      return span === undefined ? undefined : traceparentOf(span)
    },

    attempt: async ({ webhook, delivery, attempt, traceContext }, send) => {
      // Whichever instance made the change, and however long ago: its event kept the context.
      const change = traceContext === undefined ? undefined : spanContextOf(traceContext)
      const span = tracer.startSpan(SPAN.attempt, {
        root: true,
        links: change === undefined ? [] : [{ context: change }],
        attributes: { 'plant_store.webhook.id': webhook, 'plant_store.delivery.id': delivery, 'plant_store.delivery.attempt': attempt }
      }, ROOT_CONTEXT)
      try {
        const outcome = await context.with(trace.setSpan(ROOT_CONTEXT, span), send)
        if (outcome.statusCode !== undefined) span.setAttribute('http.response.status_code', outcome.statusCode)
        span.setAttribute('plant_store.delivery.delivered', outcome.delivered)
        if (!outcome.delivered) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error })
        return outcome
      } finally {
        span.end()
      }
    }
  }
}
