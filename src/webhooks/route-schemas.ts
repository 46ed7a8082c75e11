import { Type } from '@sinclair/typebox'
import { always } from '../../schemas/headers.ts'
import { IDEMPOTENCY_KEY_HOURS, IdempotencyKeyHeader } from '../../schemas/idempotency.ts'
import {
  CreatedSubscription, Delivery, DeliveryListQuery, DeliveryParams, errorResponses, EVENT_RETENTION_DAYS, GUARDED, IGNORED_BODY, JSON_BODY, MAX_SUBSCRIPTIONS,
  NewSubscription, PATH_PARAMETERS, ref, Subscription, SubscriptionParams
} from '../../schemas/index.ts'

export const subscribe = {
  operationId: 'subscribe',
  summary: 'Subscribe to new plants',
  description: `Every plant created from now on is POSTed to the URL as a \`NewPlant\`, signed as Standard Webhooks specifies with the \`secret\` of this answer, which is shown here only (see the \`plant.created\` webhook). At most ${MAX_SUBSCRIPTIONS} subscriptions exist at a time. With an \`Idempotency-Key\`, a retry of the same request within ${IDEMPOTENCY_KEY_HOURS} hours answers as the first did, secret included, and subscribes nothing more.`,
  tags: ['webhooks'],
  body: ref(NewSubscription),
  requestHeaders: IdempotencyKeyHeader,
  response: {
    201: ref(CreatedSubscription, {
      description: 'Subscribed. The `Location` header holds the subscription\'s address.',
      headers: {
        Location: always(Type.String({
          format: 'uri-reference',
          description: 'The subscription\'s address, `/webhooks/{id}`: `/webhooks/wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17`'
        }))
      }
    }),
    ...errorResponses(GUARDED, JSON_BODY, 'webhook_url_refused', 'subscription_limit', 'store_unavailable', 'store_busy',
      'idempotency_key_invalid', 'idempotency_key_in_use', 'subscription_deleted', 'idempotency_key_reused', 'idempotency_keys_exhausted')
  }
}

export const listSubscriptions = {
  operationId: 'listSubscriptions',
  summary: 'List the webhook subscriptions',
  description: 'Every subscription, oldest first, without secrets.',
  tags: ['webhooks'],
  response: {
    200: Type.Array(ref(Subscription), { description: 'Every subscription', examples: [Subscription.examples] }),
    ...errorResponses(GUARDED, 'store_unavailable', 'store_busy')
  }
}

export const getSubscription = {
  operationId: 'getSubscription',
  summary: 'Get a webhook subscription',
  tags: ['webhooks'],
  params: SubscriptionParams,
  response: {
    200: ref(Subscription, { description: 'The subscription, without its secret' }),
    ...errorResponses(GUARDED, PATH_PARAMETERS, 'webhook_not_found', 'store_unavailable', 'store_busy')
  }
}

export const unsubscribe = {
  operationId: 'unsubscribe',
  summary: 'Delete a webhook subscription',
  description: 'Stops its deliveries: those pending are dropped with its delivery log.',
  tags: ['webhooks'],
  params: SubscriptionParams,
  response: {
    204: Type.Null({ description: 'Deleted' }),
    ...errorResponses(GUARDED, PATH_PARAMETERS, 'webhook_not_found', 'store_unavailable', 'store_busy')
  }
}

export const listDeliveries = {
  operationId: 'listDeliveries',
  summary: 'List a subscription\'s deliveries',
  description: `The delivery log, newest first, one page at a time. When more remain, the \`Link\` header holds the next page's address. Delivered and failed deliveries are kept for ${EVENT_RETENTION_DAYS} days.`,
  tags: ['webhooks'],
  params: SubscriptionParams,
  querystring: DeliveryListQuery,
  response: {
    200: Type.Array(ref(Delivery), {
      description: 'A page of deliveries, newest first',
      examples: [Delivery.examples],
      headers: {
        Link: Type.String({
          description: 'RFC 8288 link to the next page, present when more deliveries remain: `</webhooks/wh_…/deliveries?limit=20&before=42>; rel="next"`'
        })
      }
    }),
    ...errorResponses(GUARDED, PATH_PARAMETERS, 'webhook_not_found', 'store_unavailable', 'store_busy')
  }
}

export const retryDelivery = {
  operationId: 'retryDelivery',
  summary: 'Start a delivery over',
  description: 'A failed (or delivered) delivery becomes pending again with no attempts made, due now, under the same `webhook-id`. A deleted plant\'s delivery is not: its data is no longer kept (`409 plant_deleted`). It takes no body: one sent anyway must be JSON, and is ignored.',
  tags: ['webhooks'],
  params: DeliveryParams,
  response: {
    // No body at all: `null` would be a JSON body of its own.
    202: Type.Unsafe<undefined>(Type.Null({ description: 'Accepted: the delivery is pending; follow it in the delivery log' })),
    ...errorResponses(GUARDED, PATH_PARAMETERS, IGNORED_BODY, 'webhook_not_found', 'delivery_not_found', 'delivery_pending', 'plant_deleted', 'store_unavailable', 'store_busy')
  }
}

export const enableSubscription = {
  operationId: 'enableSubscription',
  summary: 'Enable a disabled subscription, replaying what it missed',
  description: `A subscription disabled because its pending deliveries reached WEBHOOK_MAX_PENDING becomes active again: new plants are announced to it, and the plants it missed while disabled (those created within the last ${EVENT_RETENTION_DAYS} days and not deleted since) are queued for it in the background, oldest first, in chunks of 1,000 as its pending deliveries leave room. An active subscription is left as it is. It takes no body: one sent anyway must be JSON, and is ignored.`,
  tags: ['webhooks'],
  params: SubscriptionParams,
  response: {
    202: Type.Unsafe<undefined>(Type.Null({ description: 'Accepted: the subscription is active; what it missed is being queued (`missedSince` is shown until all of it is)' })),
    ...errorResponses(GUARDED, PATH_PARAMETERS, IGNORED_BODY, 'webhook_not_found', 'store_unavailable', 'store_busy')
  }
}
