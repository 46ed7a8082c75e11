import { Type, type Static } from '@sinclair/typebox'
import { Int64 } from './int64.js'
import { Text } from './text.js'

// Bounded so that no plant can be too large for any engine's rows or indexes, and a
// page of them stays a few MiB; counted in Unicode code points.
export const NAME_MAX_LENGTH = 1000
export const TAG_MAX_LENGTH = 100

const tag = Text({ maxLength: TAG_MAX_LENGTH, description: 'Tag that specifies the type of the plant' })

export const Plant = Type.Object({
  name: Text({ maxLength: NAME_MAX_LENGTH, description: 'The name of the plant' }),
  tag: Type.Optional(tag)
}, { $id: 'Plant', description: 'A plant as the store answers its creation: never its id.' })

const plantId = Int64({ description: 'Identification number of the plant, any signed 64-bit integer' })

// Flattened rather than `allOf [Plant, {id}]`: serializers and document generators
// mishandle allOf, and the fields stay Plant's own.
const withId = { id: plantId, ...Plant.properties }

export const NewPlant = Type.Object(withId, {
  $id: 'NewPlant',
  description: 'A plant to add. Fields other than id, name and tag are ignored.'
})

export const StoredPlant = Type.Object(withId, {
  $id: 'StoredPlant',
  description: 'A plant as the store holds it: the Plant fields and its id, written as an exact JSON integer.'
})

export const PlantIdParams = Type.Object({ id: plantId })

export const PlantListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({
    format: 'int32', minimum: 1, maximum: 1000, default: 100, description: 'At most this many plants'
  })),
  after: Type.Optional(Int64({ description: 'Only plants with a larger id: the cursor from the previous page\'s Link header' })),
  tag: Type.Optional(Text({ maxLength: TAG_MAX_LENGTH, description: 'Only plants with exactly this tag' }))
})

export type Plant = Static<typeof Plant>
/** A plant with its id, as created and as stored: the id a bigint, whatever the JSON carried. */
export type StoredPlant = Static<typeof StoredPlant>
