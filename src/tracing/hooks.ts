// The service's own spans, as the rest of the code sees them: `tracing.spans` is set only
// when tracing starts (src/tracing/sdk.ts), so with tracing off a call site costs one
// property read and nothing of OpenTelemetry is loaded.

/** What a delivery attempt tells its span. */
export interface AttemptFacts {
  webhook: string
  delivery: string
  /** 1 for the first attempt. */
  attempt: number
  /** The body sent: a plant.created's names the plant whose create the attempt is linked to. */
  payload: Buffer
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
  /** Remembers the traced create of a plant, for its deliveries to link to. */
  created: (plantId: bigint) => void
  /** Runs a delivery attempt as a trace of its own, linked to the create that caused it. */
  attempt: <T extends AttemptOutcome>(facts: AttemptFacts, send: () => Promise<T>) => Promise<T>
}

export const tracing: { spans?: ServiceSpans } = {}
