import { Type, type Static } from '@sinclair/typebox'
import { Int64 } from './int64.ts'
import { Text } from './text.ts'

// Bounded so that no plant can be too large for any engine's rows or indexes, and a
// page of them stays a few MiB; counted in Unicode code points.
export const NAME_MAX_LENGTH = 1000
export const TAG_MAX_LENGTH = 100

// The plants of every example: what "Try it out" sends and finds, and the README shows.
const monstera = { id: 1, name: 'Monstera', tag: 'tropical' }
const calathea = { id: 7, name: 'Calathea', tag: 'tropical' }

const tag = Text({ maxLength: TAG_MAX_LENGTH, description: 'Tag that specifies the type of the plant' })

export const Plant = Type.Object({
  name: Text({ maxLength: NAME_MAX_LENGTH, description: 'The name of the plant' }),
  tag: Type.Optional(tag)
}, {
  $id: 'Plant',
  description: 'A plant as the store answers its creation: never its id.',
  examples: [{ name: monstera.name, tag: monstera.tag }]
})

const plantId = Int64({ description: 'Identification number of the plant, any signed 64-bit integer', examples: [monstera.id] })

// Flattened rather than `allOf [Plant, {id}]`: serializers and document generators
// mishandle allOf, and the fields stay Plant's own.
const withId = { id: plantId, ...Plant.properties }

export const NewPlant = Type.Object(withId, {
  $id: 'NewPlant',
  description: 'A plant to add. Fields other than id, name and tag are ignored.',
  examples: [monstera]
})

export const PlantUpdate = Type.Object(Plant.properties, {
  $id: 'PlantUpdate',
  description: 'A plant\'s new name and tag, replacing both: no tag removes the tag. Fields other than name and tag are ignored, an id among them: the path names the plant.',
  examples: [{ name: 'Monstera deliciosa', tag: monstera.tag }]
})

export const StoredPlant = Type.Object(withId, {
  $id: 'StoredPlant',
  description: 'A plant as the store holds it: the Plant fields and its id, written as an exact JSON integer.',
  // Together, in id order, they are also the example of a page of plants.
  examples: [monstera, calathea]
})

export const PlantIdParams = Type.Object({ id: plantId })

// Swagger UI sends every parameter's example: these find the example plants.
export const PlantListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({
    format: 'int32', minimum: 1, maximum: 1000, default: 100, description: 'At most this many plants', examples: [10]
  })),
  after: Type.Optional(Int64({
    description: 'Only plants with a larger id: the cursor from the previous page\'s Link header', examples: [0]
  })),
  tag: Type.Optional(Text({ maxLength: TAG_MAX_LENGTH, description: 'Only plants with exactly this tag', examples: [monstera.tag] }))
}, { additionalProperties: false })

export type Plant = Static<typeof Plant>
export type PlantUpdate = Static<typeof PlantUpdate>
/** A plant with its id, as created and as stored: the id a bigint, whatever the JSON carried. */
export type StoredPlant = Static<typeof StoredPlant>
