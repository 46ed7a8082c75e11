import createError from '@fastify/error'

// Every failure the service answers with on purpose. Routes and plugins throw these;
// the one error handler turns them, and Fastify's own errors, into the Error shape.

export const InvalidJson = createError('PLANT_STORE_INVALID_JSON', 'the body is not valid JSON: %s', 400)

export const Unauthorized = createError('PLANT_STORE_UNAUTHORIZED', '%s', 401)

export const InsufficientScope = createError(
  'PLANT_STORE_INSUFFICIENT_SCOPE',
  'this token does not have the scope %s, which %s needs; ask for a token with it',
  403
)

export const PlantConflict = createError(
  'PLANT_STORE_CONFLICT',
  'a plant with id %s already exists with a different name or tag',
  409
)

export const PlantNotFound = createError('PLANT_STORE_PLANT_NOT_FOUND', 'no plant has id %s', 404)

export const WebhookNotFound = createError('PLANT_STORE_WEBHOOK_NOT_FOUND', 'no webhook subscription has id %s', 404)

export const DeliveryNotFound = createError('PLANT_STORE_DELIVERY_NOT_FOUND', 'subscription %s has no delivery with id %s', 404)

export const WebhookUrlRefused = createError('PLANT_STORE_WEBHOOK_URL_REFUSED', 'url: %s', 400)

export const SubscriptionLimit = createError(
  'PLANT_STORE_SUBSCRIPTION_LIMIT',
  'there are already %s webhook subscriptions, the most the store keeps; delete one first',
  409
)

export const DeliveryPending = createError(
  'PLANT_STORE_DELIVERY_PENDING',
  'delivery %s is pending already: its next attempt is in the delivery log',
  409
)

export const RouteNotFound = createError('PLANT_STORE_ROUTE_NOT_FOUND', 'no route for %s %s', 404)

export const StoreUnavailable = createError(
  'PLANT_STORE_UNAVAILABLE',
  'the plant store is unavailable right now; retry later',
  503
)

export const StoreBusy = createError(
  'PLANT_STORE_BUSY',
  'too many writes are waiting for the plant store; retry after the delay in Retry-After',
  503
)

export const PlantRejected = createError(
  'PLANT_STORE_PLANT_REJECTED',
  'the plant store cannot keep this plant',
  400
)

export const TooManyRequests = createError('PLANT_STORE_TOO_MANY_REQUESTS', '%s', 429)

export const Overloaded = createError(
  'PLANT_STORE_OVERLOADED',
  'the service is overloaded right now; retry after the delay in Retry-After',
  503
)

export const ShuttingDown = createError('PLANT_STORE_SHUTTING_DOWN', 'the service is shutting down; retry on another instance', 503)

export const NotReady = createError('PLANT_STORE_NOT_READY', 'not ready: %s', 503)

/** The error with headers its answer must carry (a challenge, a Retry-After…). */
export function withHeaders<E extends Error> (error: E, headers: Record<string, string>): E & { headers: Record<string, string> } {
  return Object.assign(error, { headers })
}
