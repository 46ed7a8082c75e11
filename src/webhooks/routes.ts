import { randomBytes } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyBaseLogger, FastifyReply } from 'fastify'
import { DeliveryListQuery, MAX_SUBSCRIPTIONS, PLANT_CREATED, type Delivery, type Subscription } from '../../schemas/index.ts'
import {
  DeliveryNotFound, DeliveryPending, IdempotencyKeyInUse, PlantDeleted, SubscriptionDeleted, SubscriptionLimit, WebhookNotFound, WebhookUrlRefused, withDetails,
  withHeaders
} from '../http/errors.ts'
import type { StoredDelivery, StoredSubscription, WebhookStore } from '../store/webhooks.ts'
import { AddressRefused, type AddressPolicy } from './address-policy.ts'
import { claimKey } from './idempotency-key.ts'
import {
  enableSubscription, listDeliveries, listSubscriptions, getSubscription, retryDelivery, subscribe, unsubscribe
} from './route-schemas.ts'
import { newSecret } from './signature.ts'

export interface WebhookRoutesOptions {
  store: WebhookStore
  policy: AddressPolicy
}

const DEFAULT_LIMIT: number = DeliveryListQuery.properties.limit.default

// Every route here: whoever may subscribe may point every future plant at a URL.
const config = { scope: 'webhooks:manage' } as const

/** The subscription routes: the URL is checked against the address policy, the rest is the store's. */
const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRoutesOptions> = async (app, { store, policy }) => {
  app.post('/webhooks', { schema: subscribe, config }, async (request, reply) => {
    const { claim, answered } = await claimKey(store, request.headers['idempotency-key'], request.token!, request.body)
    // The same key and body again: the first request's answer, its secret read where it is kept.
    if (answered !== undefined) return await created(reply, (await store.subscriptions()).find((s) => s.id === answered) ?? gone(answered))
    let subscription: StoredSubscription
    try {
      const { href } = await allowed(policy, request.body.url, request.log)
      subscription = { id: `wh_${randomBytes(16).toString('hex')}`, url: href, secret: newSecret(), events: request.body.events ?? [PLANT_CREATED], createdAt: new Date() }
      const outcome = await store.subscribe(subscription, MAX_SUBSCRIPTIONS, claim)
      if (outcome === 'full') throw new SubscriptionLimit(String(MAX_SUBSCRIPTIONS))
      if (outcome === 'lost') throw withHeaders(new IdempotencyKeyInUse(), { 'retry-after': '1' })
    } catch (err) {
      // Nothing was created: a retry with the key runs again.
      if (claim !== undefined) await store.releaseKey(claim).catch((cause: unknown) => request.log.warn({ err: cause }, 'cannot release an Idempotency-Key; it is free again once its lease ends'))
      throw err
    }
    return await created(reply, subscription)
  })

  app.get('/webhooks', { schema: listSubscriptions, config }, async () => (await store.subscriptions()).map(shown))

  app.get('/webhooks/:id', { schema: getSubscription, config }, async (request) => shown(await existing(store, request.params.id)))

  app.delete('/webhooks/:id', { schema: unsubscribe, config }, async (request, reply) => {
    if (!await store.unsubscribe(request.params.id)) throw new WebhookNotFound(request.params.id)
    return await reply.code(204).send(null)
  })

  app.get('/webhooks/:id/deliveries', { schema: listDeliveries, config }, async (request, reply) => {
    const { id } = request.params
    const { limit = DEFAULT_LIMIT, before } = request.query
    await existing(store, id)
    const page = await store.deliveries(id, { limit: limit + 1, before })
    if (page.length > limit) {
      page.length = limit
      reply.header('link', `</webhooks/${id}/deliveries?${new URLSearchParams({ limit: String(limit), before: String(page[limit - 1].seq) })}>; rel="next"`)
    }
    return page.map(delivery)
  })

  app.post('/webhooks/:id/deliveries/:deliveryId/retry', { schema: retryDelivery, config }, async (request, reply) => {
    const { id, deliveryId } = request.params
    await existing(store, id)
    const outcome = await store.restart(id, deliveryId)
    if (outcome === 'absent') throw new DeliveryNotFound(id, deliveryId)
    if (outcome === 'pending') throw new DeliveryPending(deliveryId)
    if (outcome === 'erased') throw new PlantDeleted(deliveryId)
    return await reply.code(202).send()
  })

  app.post('/webhooks/:id/enable', { schema: enableSubscription, config }, async (request, reply) => {
    if (!await store.enable(request.params.id)) throw new WebhookNotFound(request.params.id)
    return await reply.code(202).send()
  })
}

export default webhookRoutes

/** The URL as the address policy normalizes it; a refusal says which kind of problem, what the host resolved to is the operator's. */
async function allowed (policy: AddressPolicy, url: string, log: FastifyBaseLogger): Promise<URL> {
  try {
    return await policy.check(url)
  } catch (err) {
    if (!(err instanceof AddressRefused)) throw err
    if (err.detail !== undefined) log.warn({ detail: err.detail }, `webhook subscription refused: ${err.message}`)
    throw withDetails(new WebhookUrlRefused(err.message), [{ field: 'body/url', message: err.message }])
  }
}

/** The answer to a subscribe, the first time and to each retry with its key: as the subscription was created, with its secret. */
async function created (reply: FastifyReply, { id, url, secret, events, createdAt }: StoredSubscription): Promise<FastifyReply> {
  return await reply.code(201).header('location', `/webhooks/${id}`).send({ ...shown({ id, url, secret, events, createdAt }), secret })
}

function gone (id: string): never {
  throw new SubscriptionDeleted(id)
}

async function existing (store: WebhookStore, id: string): Promise<StoredSubscription> {
  const subscription = (await store.subscriptions()).find((s) => s.id === id)
  if (subscription === undefined) throw new WebhookNotFound(id)
  return subscription
}

function shown ({ id, url, events, createdAt, disabledAt, missedSince, pending }: StoredSubscription): Subscription {
  return {
    id,
    url,
    events: events ?? [PLANT_CREATED],
    createdAt: createdAt.toISOString(),
    status: disabledAt === undefined ? 'active' : 'disabled',
    pendingDeliveries: Math.max(0, pending ?? 0),
    disabledAt: disabledAt?.toISOString(),
    missedSince: missedSince?.toISOString()
  }
}

function delivery (stored: StoredDelivery): Delivery {
  const { id, plantId, event, status, attempts, lastStatusCode, lastError, nextAttemptAt, createdAt, deliveredAt } = stored
  return {
    id,
    event,
    plantId,
    status,
    attempts,
    lastStatusCode,
    lastError,
    nextAttemptAt: nextAttemptAt?.toISOString(),
    createdAt: createdAt.toISOString(),
    deliveredAt: deliveredAt?.toISOString()
  }
}
