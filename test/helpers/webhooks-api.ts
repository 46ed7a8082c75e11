import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { AUTH, assertError } from './app.ts'
import { retryUntil } from './wait.ts'
import type { LoggedDelivery } from './webhook-app.ts'

// The webhook API's routes through app.inject, and the settings, addresses and answers
// its tests share (test/webhooks-api-*.test.ts).

// Limits these tests do not exercise: no per-token rate, no lockout after rejected
// tokens, no overload checks, so that every answer is the webhook routes' own.
export const ENV = { RATE_LIMIT_PER_TOKEN: '0', AUTH_FAILURE_LIMIT: '1000000000', MAX_EVENT_LOOP_DELAY_MS: '0', MAX_HEAP_USED_PERCENT: '0' }
export const PRIVATE = { ...ENV, WEBHOOK_ALLOW_PRIVATE: 'true' }

export const PUBLIC_V4 = '93.184.216.34'
export const PUBLIC_URL = `https://${PUBLIC_V4}/hook`
export const SUBSCRIPTION_ID = /^wh_[0-9a-f]{32}$/
export const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/
export const UNKNOWN_ID = `wh_${'0'.repeat(32)}`
export const UNKNOWN_DELIVERY = `msg_${'0'.repeat(32)}`
export const URL_MAX_LENGTH = 2048
// Refusals say which kind of problem, never what a name resolved to (the log has it).
export const NOT_PUBLIC = 'the host is not a public address; webhooks go to public addresses only'
export const RESOLVES_NOT_PUBLIC = 'the host resolves to an address that is not public; webhooks go to public addresses only'
export const NOT_RESOLVED = 'the host does not resolve'

export interface Created { id: string, url: string, events: string[], secret: string, createdAt: string }
// The in-process delivery tests read plantId as exact text; these ids are small, read as numbers.
export type Delivery = Omit<LoggedDelivery, 'plantId'> & { plantId: number }

export async function subscribe (app: FastifyInstance, url: unknown, headers: Record<string, string> = AUTH): Promise<LightMyRequestResponse> {
  return await app.inject({
    method: 'POST',
    url: '/webhooks',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: JSON.stringify(url === undefined ? {} : { url })
  })
}

/** Subscribes and asserts the 201; returns the created subscription. */
export async function subscribed (t: Test, app: FastifyInstance, url: string): Promise<Created> {
  const res = await subscribe(app, url)
  t.equal(res.statusCode, 201, `subscribed ${url.slice(0, 80)}: ${res.body.slice(0, 200)}`)
  return res.json()
}

/** Asserts a 400 in the Error shape; returns its message. */
export function refused (t: Test, res: LightMyRequestResponse, what: string): string {
  return assertError(t, res, 400, what)
}

export async function listSubscriptions (app: FastifyInstance): Promise<Array<Omit<Created, 'secret'>>> {
  const res = await app.inject({ url: '/webhooks', headers: AUTH })
  if (res.statusCode !== 200) throw new Error(`GET /webhooks answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

export async function deliveries (app: FastifyInstance, id: string, query = 'limit=100'): Promise<Delivery[]> {
  const res = await app.inject({ url: `/webhooks/${id}/deliveries?${query}`, headers: AUTH })
  if (res.statusCode !== 200) throw new Error(`GET deliveries answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

/** Waits until the delivery log of `id` satisfies `done`; returns it (the last one read, if it never does). */
export async function logUntil (app: FastifyInstance, id: string, done: (log: Delivery[]) => boolean): Promise<Delivery[]> {
  return (await retryUntil(async () => await deliveries(app, id), done, 10_000, 20)).value
}

export async function retry (app: FastifyInstance, id: string, deliveryId: string): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url: `/webhooks/${id}/deliveries/${deliveryId}/retry`, headers: AUTH })
}
