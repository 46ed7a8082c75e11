import { Type, type Static } from '@sinclair/typebox'
import { Int64 } from './int64.ts'
import { HTTP_URL_PATTERN } from './url.ts'

/** How long events and settled deliveries are kept at least: the change feed's and the delivery log's reach, and a replay's. */
export const EVENT_RETENTION_DAYS = 7

/** The events this service announces: a plant's creation, update and deletion. */
export const PLANT_CREATED = 'plant.created'
export const PLANT_UPDATED = 'plant.updated'
export const PLANT_DELETED = 'plant.deleted'
export const EVENT_TYPES = [PLANT_CREATED, PLANT_UPDATED, PLANT_DELETED] as const
export type EventType = typeof EVENT_TYPES[number]

export const EventTypeSchema = Type.Union(EVENT_TYPES.map((type) => Type.Literal(type)), {
  description: '`plant.created`: a plant was added; `plant.updated`: its name or tag changed; `plant.deleted`: it was deleted'
})

// Long enough for any real endpoint, short enough that a list of subscriptions stays small.
export const WEBHOOK_URL_MAX_LENGTH = 2048

/** The most subscriptions a store keeps: each create writes one delivery per subscription. */
export const MAX_SUBSCRIPTIONS = 20
/** A subscription's pending deliveries past which it is disabled: WEBHOOK_MAX_PENDING's default. */
export const DEFAULT_MAX_PENDING = 10_000

// The examples: one subscription; plant 1 delivered, plant 7 pending.
const example = {
  subscription: 'wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17',
  url: 'https://example.com/plant-hooks',
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw+nQgnXsPGJk=',
  createdAt: '2026-11-23T05:45:31.512Z',
  delivered: 'msg_8b1e6f0d2c4a4f7e9d3b5a7c1e0f2d4b',
  pending: 'msg_2c7d9e1f3a5b4c6d8e0f1a2b3c4d5e6f'
}

const subscriptionId = Type.String({
  pattern: '^wh_[0-9a-f]{32}$',
  description: 'Identification of the subscription',
  examples: [example.subscription]
})

const deliveryId = Type.String({
  pattern: '^msg_[0-9a-f]{32}$',
  description: 'Identification of the delivery: the `webhook-id` header of each of its attempts, by which a receiver deduplicates',
  examples: [example.delivered]
})

const timestamp = (description: string) => Type.String({ format: 'date-time', description })

export const NewSubscription = Type.Object({
  url: Type.String({
    format: 'uri',
    pattern: HTTP_URL_PATTERN,
    maxLength: WEBHOOK_URL_MAX_LENGTH,
    description: `Where each new plant is POSTed: an absolute https URL, at most ${WEBHOOK_URL_MAX_LENGTH} characters once normalized, \
without a user name or password, not on port 0, whose host resolves only to public addresses. \
http, and private or loopback addresses, only when the service runs with WEBHOOK_ALLOW_PRIVATE.`,
    examples: [example.url]
  }),
  events: Type.Optional(Type.Array(EventTypeSchema, {
    minItems: 1,
    maxItems: EVENT_TYPES.length,
    uniqueItems: true,
    default: [PLANT_CREATED],
    description: 'The events announced to it, each at most once; `["plant.created"]` when left out',
    examples: [[...EVENT_TYPES]]
  }))
}, {
  $id: 'NewSubscription',
  description: 'A webhook subscription to add. Fields other than url and events are ignored.',
  examples: [{ url: example.url }]
})

const subscription = {
  id: example.subscription, url: example.url, events: [PLANT_CREATED], createdAt: example.createdAt, status: 'active', pendingDeliveries: 0
}

const disabled = {
  ...subscription, status: 'disabled', pendingDeliveries: 10000, disabledAt: '2026-11-24T02:10:09.317Z', missedSince: '2026-11-24T02:10:09.317Z'
}

const subscriptionFields = {
  id: subscriptionId,
  url: NewSubscription.properties.url,
  events: Type.Array(EventTypeSchema, { description: 'The events announced to it' }),
  createdAt: timestamp('When the subscription was created'),
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
    description: '`active`: each event it chose is announced to it; `disabled`: its pending deliveries reached WEBHOOK_MAX_PENDING, so new events are not (its pending ones still are). `POST /webhooks/{id}/enable` makes it active again and replays what it missed.'
  }),
  pendingDeliveries: Type.Integer({ minimum: 0, description: 'Its deliveries pending now' }),
  disabledAt: Type.Optional(timestamp('When it was disabled; only while disabled')),
  missedSince: Type.Optional(timestamp(`While disabled, or while what it missed is being replayed: when the first event it missed happened. Missed events it chose are replayed if within the last ${EVENT_RETENTION_DAYS} days and their plant not deleted since (a plant.deleted is replayed).`))
}

export const Subscription = Type.Object(subscriptionFields, {
  $id: 'Subscription',
  description: 'A webhook subscription, as listed: without its secret.',
  examples: [subscription, disabled]
})

export const CreatedSubscription = Type.Object({
  ...subscriptionFields,
  secret: Type.String({
    pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
    description: 'The Standard Webhooks signing key: `whsec_` and the base64 of 32 random bytes. Shown in this answer only; keep it to verify `webhook-signature`.',
    examples: [example.secret]
  })
}, {
  $id: 'CreatedSubscription',
  description: 'A webhook subscription just created, with its secret.',
  examples: [{ ...subscription, secret: example.secret }]
})

export const DeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], {
  description: '`pending`: waiting for its next attempt; `delivered`: a 2xx acknowledged it; `failed`: every attempt failed (POST …/retry starts it over)'
})

export const Delivery = Type.Object({
  id: deliveryId,
  event: EventTypeSchema,
  plantId: Int64({ description: 'The id of the plant announced' }),
  status: DeliveryStatus,
  attempts: Type.Integer({ minimum: 0, description: 'Attempts made so far' }),
  lastStatusCode: Type.Optional(Type.Integer({ description: 'The HTTP status the last attempt was answered with' })),
  lastError: Type.Optional(Type.String({ description: 'Why the last attempt failed, when it got no acceptable answer: the kind of problem (a timeout, a refused connection, a host that resolves to an address that is not public, a TLS certificate not valid for the host…), never the receiver\'s addresses or certificate contents' })),
  nextAttemptAt: Type.Optional(timestamp('When the next attempt is due; only while pending')),
  createdAt: timestamp('When the event happened: the plant was created, updated or deleted'),
  deliveredAt: Type.Optional(timestamp('When a 2xx acknowledged it'))
}, {
  $id: 'Delivery',
  description: 'One announcement of one event of a plant to one subscription, and where it stands.',
  // Newest first, as the delivery log lists them: also the example of a page.
  examples: [{
    id: example.pending,
    event: PLANT_CREATED,
    plantId: 7,
    status: 'pending',
    attempts: 2,
    lastStatusCode: 503,
    nextAttemptAt: '2026-11-23T05:49:47.391Z',
    createdAt: '2026-11-23T05:49:40.023Z'
  }, {
    id: example.delivered,
    event: PLANT_CREATED,
    plantId: 1,
    status: 'delivered',
    attempts: 1,
    lastStatusCode: 204,
    createdAt: '2026-11-23T05:47:16.902Z',
    deliveredAt: '2026-11-23T05:47:17.041Z'
  }]
})

export const SubscriptionParams = Type.Object({ id: subscriptionId })

export const DeliveryParams = Type.Object({ id: subscriptionId, deliveryId })

export const DeliveryListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({
    format: 'int32', minimum: 1, maximum: 100, default: 20, description: 'At most this many deliveries', examples: [20]
  })),
  before: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'Only deliveries older than this cursor: take it from the previous page\'s Link header',
    examples: [42]
  }))
}, { additionalProperties: false })

export type NewSubscription = Static<typeof NewSubscription>
export type Subscription = Static<typeof Subscription>
export type CreatedSubscription = Static<typeof CreatedSubscription>
export type Delivery = Static<typeof Delivery>
export type DeliveryStatus = Static<typeof DeliveryStatus>

const signatureHeader = (name: string, description: string, example: string) => ({
  name, in: 'header' as const, required: true, description, schema: { type: 'string' as const }, example
})

const signed = [
  signatureHeader('webhook-id', 'The delivery\'s id: one per event and subscription, the same on every attempt.', example.delivered),
  signatureHeader('webhook-timestamp', 'When this attempt was sent, in seconds since the epoch: refuse one too far from your clock to stop replays.', '1795412837'),
  signatureHeader('webhook-signature', '`v1,` and the base64 HMAC-SHA256, under the secret\'s key, of `<webhook-id>.<webhook-timestamp>.<body>`.', 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=')
]

const DELIVERY_TERMS = 'Verify `webhook-signature` with the subscription\'s secret (the `standardwebhooks` package does it), and read the id from the raw body: it is an exact int64, beyond what a JSON number parsed to a double holds. Any 2xx within WEBHOOK_TIMEOUT_MS acknowledges; anything else (a redirect included: redirects are not followed) is retried with exponential backoff and full jitter, up to WEBHOOK_MAX_ATTEMPTS. A subscription gets the events of one plant in the order they happened: one is not attempted while an earlier one of the same plant is pending.'

// Plain JSON Schema: the document's `webhooks` are written as they are, not compiled; the
// bodies are components (schemas/change.ts), which the change feed's events hold too.

function webhook (operationId: string, summary: string, description: string, schema: Record<string, unknown>) {
  return {
    post: {
      operationId,
      summary,
      description: `${description} ${DELIVERY_TERMS}`,
      tags: ['webhooks'],
      security: [],
      parameters: signed,
      requestBody: { required: true, content: { 'application/json': { schema } } },
      responses: { 200: { description: 'Acknowledged (any 2xx is)' } }
    }
  }
}

/** The document's `webhooks`: one POST per event, signed per Standard Webhooks. */
export const plantWebhook = {
  '/plant/webhook': webhook('plantWebhook', 'A plant was added',
    'Sent to each subscription with `plant.created` among its events once a created plant is committed, at least once: a receiver deduplicates by `webhook-id`. The body is the NewPlant, without a `type` field (as before subscriptions chose their events).',
    { $ref: '#/components/schemas/NewPlant' }),
  '/plant/updated': webhook('plantUpdatedWebhook', 'A plant\'s name or tag changed',
    'Sent to each subscription with `plant.updated` among its events once an update that changed the plant is committed, at least once. `old` and `new` are the plant before and after.',
    { $ref: '#/components/schemas/PlantUpdated' }),
  '/plant/deleted': webhook('plantDeletedWebhook', 'A plant was deleted',
    'Sent to each subscription with `plant.deleted` among its events once a delete is committed, at least once, with the name and tag the plant had. The plant\'s earlier events still pending for any subscription are failed (`plant deleted`) and not sent: their data is erased with the plant.',
    { $ref: '#/components/schemas/PlantDeleted' })
}
