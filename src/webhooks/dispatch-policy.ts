import { EVENT_RETENTION_DAYS } from '../../schemas/index.ts'

/** How the dispatcher paces deliveries, as configured. */
export interface DispatcherSettings {
  /** Attempts in flight at once for one subscription, in this instance. */
  concurrency: number
  /** The attempts a delivery gets before it is failed. */
  maxAttempts: number
  /** The first retry waits up to this long; each next one up to twice as long, up to MAX_RETRY_DELAY_MS. */
  retryBaseMs: number
  /** How long one attempt may take. */
  timeoutMs: number
  /** How long closing waits for the attempts in flight before cutting them off. */
  closeWaitMs: number
}

const MAX_RETRY_DELAY_MS = 60 * 60 * 1000
// Polled even when nothing announces: retries come due, and other instances write deliveries.
export const POLL_INTERVAL_MS = 1000
// Delivered and failed deliveries, and events, are kept this long, then deleted.
export const RETENTION_MS = EVENT_RETENTION_DAYS * 24 * 60 * 60 * 1000
export const PRUNE_INTERVAL_MS = 10 * 60 * 1000
// Failures in a row that pause a receiver: a few errors of a working receiver never do.
export const FAILURES_TO_PAUSE = 10
// A paused receiver is tried again at least this often.
export const MAX_PAUSE_MS = 60 * 1000

/** Full jitter: a random wait up to the exponential step, so that receivers that come back are not hit all at once. */
export function retryDelay (attemptsMade: number, baseMs: number): number {
  return Math.random() * Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.min(attemptsMade - 1, 40))
}
