import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { startTracing } from '../../src/tracing/sdk.ts'

// Tracing in-process, into memory: started before the app's modules are imported (the
// SDK patches pg as it loads), so a test file imports its app helpers dynamically after.

export const exporter = new InMemorySpanExporter()
export const tracingStarted = startTracing([new SimpleSpanProcessor(exporter)])

/** The spans of one trace, by name; the first span of that name for `one`. */
export function traceOf (traceId: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId)
}

/** The parent's span id of a span, or undefined for a root. */
export const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId

/** A span's trace and span ids, as a link to it names them. */
export const idsOf = (span: ReadableSpan): string => `${span.spanContext().traceId}-${span.spanContext().spanId}`

/** The trace and span ids of the spans a span links to. */
export const linksOf = (span: ReadableSpan): string[] => span.links.map(({ context }) => `${context.traceId}-${context.spanId}`)

/** Every span's name, attribute, event and status text: what a secret must never be found in. */
export function everythingRecorded (): string {
  return JSON.stringify(exporter.getFinishedSpans().map((span) => ({
    name: span.name, attributes: span.attributes, events: span.events, status: span.status, links: span.links
  })))
}

/** The trace id of the server span answering a request with this traceparent (W3C: version-trace-parent-flags). */
export const traceparent = (traceId: string, spanId: string): string => `00-${traceId}-${spanId}-01`
