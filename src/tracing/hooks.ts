// The service's own spans, as the rest of the code sees them: `tracing.spans` is set only
// when tracing starts (src/tracing/sdk.ts), so with tracing off a call site costs one
// property read and nothing of OpenTelemetry is loaded.

/** What a delivery attempt tells its span. */
export interface AttemptFacts {
  webhook: string
  delivery: string
  /** 1 for the first attempt. */
  attempt: number
  /** The W3C traceparent kept with its event: the request that made the change, which the attempt links to. */
  traceContext?: string
}

/** What came of an attempt, as far as its span says. */
export interface AttemptOutcome {
  delivered: boolean
  statusCode?: number
  error?: string
}

export interface ServiceSpans {
  /** A write joins the group-commit queue: its wait (a child of the request) starts; undefined outside a traced request. */
  queued: () => unknown
  /** Runs a batch's write in its span, which links to every wait it served and each wait to it. */
  batch: <T>(waits: unknown[], size: number, write: () => Promise<T>) => Promise<T>
  /** Runs the writing of a change's event and deliveries in a span of its own. */
  outbox: <T>(write: () => T) => T
  /** The W3C traceparent of the traced request under way, for its change's event to keep; undefined outside one. */
  traceContext: () => string | undefined
  /** Runs a delivery attempt as a trace of its own, linked to the change that caused it. */
  attempt: <T extends AttemptOutcome>(facts: AttemptFacts, send: () => Promise<T>) => Promise<T>
}

export const tracing: { spans?: ServiceSpans } = {}
