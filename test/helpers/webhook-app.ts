import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { AUTH } from './app.ts'
import { retryUntil } from './wait.ts'

// Subscribing, and reading the delivery log and /metrics, on the in-process app (app.inject)
// for the delivery tests; webhook-client.ts does the same on the service as a process.

export const PRIVATE = { WEBHOOK_ALLOW_PRIVATE: 'true' }
// A failed attempt is retried so late that a test sees only the first one.
export const SLOW_RETRY = { WEBHOOK_RETRY_BASE_MS: '3600000' }

/** A delivery as the log lists it, plantId kept as the exact integer text it was written as. */
export interface LoggedDelivery {
  id: string
  event: string
  plantId: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  lastStatusCode?: number
  lastError?: string
  nextAttemptAt?: string
  createdAt: string
  deliveredAt?: string
}

export async function subscribe (t: Test, app: FastifyInstance, url: string): Promise<{ id: string, secret: string }> {
  const res = await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url } })
  t.equal(res.statusCode, 201, `subscribed to ${url}: ${res.body}`)
  const { id, secret } = res.json()
  return { id, secret }
}

/** The delivery log, newest first; fails the test unless it answers 200. */
export async function deliveries (app: FastifyInstance, webhook: string): Promise<LoggedDelivery[]> {
  const res = await app.inject({ url: `/webhooks/${webhook}/deliveries?limit=100`, headers: AUTH })
  if (res.statusCode !== 200) throw new Error(`the delivery log answered ${res.statusCode}: ${res.body}`)
  // JSON.parse would round an id beyond 2^53: the integer is read as its text.
  return JSON.parse(res.body.replace(/"plantId":(-?\d+)/g, '"plantId":"$1"'))
}

/** Waits until the log satisfies `done`; returns the last log read (the assertions that follow tell what was wrong). */
export async function logUntil (
  app: FastifyInstance,
  webhook: string,
  done: (log: LoggedDelivery[]) => boolean,
  timeoutMs = 10_000
): Promise<LoggedDelivery[]> {
  return (await retryUntil(async () => await deliveries(app, webhook), done, timeoutMs, 20)).value
}

/** Whether the log holds `count` deliveries, every one in `status`. */
export const settled = (log: LoggedDelivery[], count: number, status: LoggedDelivery['status'] = 'delivered'): boolean =>
  log.length === count && log.every((d) => d.status === status)

/** The number in the first /metrics line that `line` matches, or undefined when none does. */
export async function metric (app: FastifyInstance, line: RegExp): Promise<number | undefined> {
  const text = (await app.inject({ url: '/metrics', headers: AUTH })).body
  const found = line.exec(text)
  return found === null ? undefined : Number(found[1])
}
