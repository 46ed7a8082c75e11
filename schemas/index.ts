import type { TSchema } from '@sinclair/typebox'
import { ErrorBody } from './error.js'
import { Health } from './health.js'
import { NewPlant, Plant, StoredPlant } from './plant.js'
import { CreatedSubscription, Delivery, NewSubscription, Subscription } from './webhook.js'

export { ErrorBody, Health, NewPlant, Plant, StoredPlant }
export { CreatedSubscription, Delivery, NewSubscription, Subscription }
export { NAME_MAX_LENGTH, PlantIdParams, PlantListQuery, TAG_MAX_LENGTH } from './plant.js'
export { DeliveryListQuery, DeliveryParams, MAX_SUBSCRIPTIONS, PLANT_CREATED, SubscriptionParams } from './webhook.js'
export { Int64, INT64_MAX, INT64_MIN } from './int64.js'
export { ref } from './ref.js'
export { errorExamples, errorResponses, GUARDED, IGNORED_BODY, JSON_BODY, PATH_PARAMETERS } from './responses.js'
export { ERROR_CODES, type ErrorCode, type ErrorDetail } from './error.js'

/** Every schema with an $id: registered once, referenced by name, a component in the document. */
export const sharedSchemas: TSchema[] = [
  Plant, NewPlant, StoredPlant, ErrorBody, Health, NewSubscription, Subscription, CreatedSubscription, Delivery
]
