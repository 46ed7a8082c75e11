import type { Client } from 'openapi-fetch'
import { orThrow } from './errors.ts'
import type { components, paths } from './schema.ts'

export type NewSubscription = components['schemas']['NewSubscription']
/** A subscription as its subscribe answers it: with its secret, shown then only. */
export type CreatedSubscription = components['schemas']['CreatedSubscription']

export interface SubscribeOptions {
  /** The subscribe's Idempotency-Key: pass the same one to retry it safely later. A new UUID when left out. */
  idempotencyKey?: string
  /** Tries in all, under the one key, while no answer comes, the key's first request still runs (409) or the service is busy (503): 3. */
  attempts?: number
}

// Answers that mean "not yet": the key's first request still runs, or the service cannot serve now.
const AGAIN = new Set([409, 503])
const MAX_WAIT_MS = 10_000

/** The Idempotency-Key field: the key as a Structured Field string. */
export function idempotencyKeyField (key: string): string {
  return `"${key.replace(/[\\"]/g, '\\$&')}"`
}

/**
 * POST /webhooks with an Idempotency-Key, tried again under the same key when the answer is
 * lost or says to wait: the service answers a retry as it answered the first request, so a
 * subscribe tried many times subscribes once.
 */
export function subscriber (api: Client<paths>) {
  return async function subscribe (subscription: NewSubscription, { idempotencyKey = globalThis.crypto.randomUUID(), attempts = 3 }: SubscribeOptions = {}): Promise<CreatedSubscription> {
    const init = { params: { header: { 'Idempotency-Key': idempotencyKeyField(idempotencyKey) } }, body: subscription }
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= attempts
      let result
      try {
        result = await api.POST('/webhooks', init)
      } catch (err) {
        if (last) throw err
        await pause(attempt * 1000)
        continue
      }
      const code = (result.error as { code?: string } | undefined)?.code
      if (last || !AGAIN.has(result.response.status) || code === 'subscription_limit') return orThrow(result)
      await pause(Number(result.response.headers.get('retry-after') ?? 1) * 1000)
    }
  }
}

async function pause (ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, Math.min(Number.isFinite(ms) ? ms : 1000, MAX_WAIT_MS)))
}
