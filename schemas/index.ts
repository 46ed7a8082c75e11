import type { TSchema } from '@sinclair/typebox'
import { Change, ChangePage, PlantDeleted, PlantUpdated } from './change.ts'
import { ErrorBody } from './error.ts'
import { Health } from './health.ts'
import { NewPlant, Plant, PlantUpdate, StoredPlant } from './plant.ts'
import { CreatedSubscription, Delivery, NewSubscription, Subscription } from './webhook.ts'

export { ErrorBody, Health, NewPlant, Plant, PlantUpdate, StoredPlant }
export { CreatedSubscription, Delivery, NewSubscription, Subscription }
export { Change, ChangePage, PlantDeleted, PlantUpdated }
export { CHANGES_MAX_LIMIT, CHANGES_MAX_WAIT_SECONDS, ChangesQuery, HEARTBEAT_SECONDS, STREAM_SECONDS } from './change.ts'
export { NAME_MAX_LENGTH, PlantIdParams, PlantListQuery, TAG_MAX_LENGTH } from './plant.ts'
export {
  DeliveryListQuery, DeliveryParams, EVENT_RETENTION_DAYS, EVENT_TYPES, MAX_SUBSCRIPTIONS, PLANT_CREATED, PLANT_DELETED, PLANT_UPDATED, SubscriptionParams, type EventType
} from './webhook.ts'
export { Int64, INT64_MAX, INT64_MIN } from './int64.ts'
export { ref } from './ref.ts'
export { errorExamples, errorResponses, GUARDED, IGNORED_BODY, JSON_BODY, PATH_PARAMETERS } from './responses.ts'
export { ERROR_CODES, type ErrorCode, type ErrorDetail } from './error.ts'

/** Every schema with an $id: registered once, referenced by name, a component in the document. */
export const sharedSchemas: TSchema[] = [
  Plant, NewPlant, PlantUpdate, StoredPlant, ErrorBody, Health, NewSubscription, Subscription, CreatedSubscription, Delivery,
  PlantUpdated, PlantDeleted, Change, ChangePage
]
export { CollectionPreconditions, PlantPreconditions } from './preconditions.ts'
