import createError from '@fastify/error'
import { ERROR_CODES, type ErrorCode, type ErrorDetail } from '../../schemas/error.ts'

// Failures answered on purpose: the code is the public `code`, the status the catalogue's.

function failure (code: ErrorCode, message: string) {
  return createError(code, message, ERROR_CODES[code].status)
}

export const TargetInvalid = failure('invalid_request', 'the request target must be a path such as /plants (or * for OPTIONS)')

export const InvalidJson = failure('invalid_json', 'the body is not valid JSON: %s')

export const UnknownParameter = failure('unknown_parameter', '%s')

export const InvalidParameter = failure('invalid_parameter', '%s')

export const TokenMissing = failure('token_missing', 'missing bearer token: send the header "Authorization: Bearer <token>"')

export const AuthorizationMalformed = failure('authorization_malformed', 'the Authorization header is not a bearer token: send "Authorization: Bearer <token>"')

export const TokenInvalid = failure('token_invalid', 'the bearer token is not valid')

export const TokenExpired = failure('token_expired', 'the bearer token expired at %s; ask for a new one')

export const InsufficientScope = failure(
  'insufficient_scope',
  'this token does not have the scope %s, which %s needs; ask for a token with it'
)

export const PlantConflict = failure('plant_conflict', 'a plant with id %s already exists with a different name or tag')

export const PlantNotFound = failure('plant_not_found', 'no plant has id %s')

export const PreconditionFailed = failure('precondition_failed', 'plant %s is not as the request\'s If-Match or If-None-Match require (it changed since it was read?): nothing was written')

export const CollectionPreconditionFailed = failure('precondition_failed', '/plants always exists and has no ETag: If-Match other than * and If-None-Match: * are never met; nothing was written')

export const PreconditionUnsupported = failure('precondition_unsupported', 'If-Unmodified-Since cannot be evaluated: plants keep no modification date; send If-Match with the ETag of a read')

export const WebhookNotFound = failure('webhook_not_found', 'no webhook subscription has id %s')

export const DeliveryNotFound = failure('delivery_not_found', 'subscription %s has no delivery with id %s')

export const WebhookUrlRefused = failure('webhook_url_refused', '%s')

export const SubscriptionLimit = failure(
  'subscription_limit',
  'there are already %s webhook subscriptions, the most the store keeps; delete one first'
)

export const DeliveryPending = failure('delivery_pending', 'delivery %s is pending already: its next attempt is in the delivery log')

export const PlantDeleted = failure('plant_deleted', 'the plant of delivery %s was deleted: its data is no longer kept, so it is not sent again')

export const IdempotencyKeyInvalid = failure('idempotency_key_invalid', 'the Idempotency-Key %s; send a quoted one, such as Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"')

export const IdempotencyKeyInUse = failure('idempotency_key_in_use', 'a request with this Idempotency-Key is still running; retry after the delay in Retry-After for its answer')

export const SubscriptionDeleted = failure('subscription_deleted', 'the subscription %s this Idempotency-Key created was deleted since; subscribe with a new key')

export const IdempotencyKeyReused = failure('idempotency_key_reused', 'this Idempotency-Key was used with another body within the last %s hours; use a new key for a new request')

export const IdempotencyKeysExhausted = failure('idempotency_keys_exhausted', 'this token has %s Idempotency-Keys kept already, the most it may; retry after the delay in Retry-After')

export const RouteNotFound = failure('route_not_found', 'no route for %s %s')

export const MethodNotAllowed = failure('method_not_allowed', '%s %s is not an operation of this API; the path takes %s')

export const CursorExpired = failure('cursor_expired', 'the change feed no longer holds the events after cursor %s: %s; read the plants again, then follow the feed from its latest')

export const TooManyReaders = failure('too_many_readers', 'this token already has %s change-feed requests waiting or streaming, the most it may; end one first')

export const RateLimited = failure('rate_limited', 'more than %s requests a second with this token')

export const AuthLockedOut = failure('auth_locked_out', 'too many rejected tokens from this address; retry after the delay in Retry-After')

export const Overloaded = failure('overloaded', 'the service is overloaded right now; retry after the delay in Retry-After')

export const ShuttingDown = failure('shutting_down', 'the service is shutting down; retry on another instance')

export const NotReady = failure('not_ready', 'not ready: %s')

/** The error with headers its answer must carry (a challenge, a Retry-After…). */
export function withHeaders<E extends Error> (error: E, headers: Record<string, string>): E & { headers: Record<string, string> } {
  return Object.assign(error, { headers })
}

/** The error with the field-by-field problems its answer lists in `details`. */
export function withDetails<E extends Error> (error: E, details: ErrorDetail[]): E & { details: ErrorDetail[] } {
  return Object.assign(error, { details })
}
