import { isSpanContextValid, type SpanContext } from '@opentelemetry/api'

// A span context as the W3C Trace Context header writes it (version 00), the form a
// change's event keeps it in: plain text, readable by any instance and any later version.

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/** `00-<trace id>-<span id>-<flags>`. */
export function formatTraceparent ({ traceId, spanId, traceFlags }: SpanContext): string {
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`
}

/** The span context a traceparent names, or undefined when it names none (malformed, or all zeros). */
export function parseTraceparent (traceparent: string): SpanContext | undefined {
  const [, traceId, spanId, flags] = TRACEPARENT.exec(traceparent) ?? []
  if (traceId === undefined) return undefined
  const context = { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true }
  return isSpanContextValid(context) ? context : undefined
}
