import { Type, type Static } from '@sinclair/typebox'
import { Int64 } from './int64.js'

export const Plant = Type.Object({
  name: Type.String({ description: 'The name of the plant' }),
  tag: Type.Optional(Type.String({ description: 'Tag that specifies the type of the plant' }))
}, { $id: 'Plant', description: 'A plant as the store returns it after creation: never its id.' })

// Flattened rather than `allOf [Plant, {id}]`: serializers and document generators
// mishandle allOf, and the fields stay Plant's own.
export const NewPlant = Type.Object({
  id: Int64({ description: 'Identification number of the plant, any signed 64-bit integer' }),
  ...Plant.properties
}, { $id: 'NewPlant', description: 'A plant to add. Fields other than id, name and tag are ignored.' })

export type Plant = Static<typeof Plant>
export type NewPlant = Static<typeof NewPlant>
