import { Kind, Type, TypeRegistry, type SchemaOptions } from '@sinclair/typebox'

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

// A JS number cannot tell 2^63-1 from 2^63: a custom kind lets TypeBox check the exact
// value; the document still says `type: integer, format: int64`.
TypeRegistry.Set('Int64', (_schema, value) => typeof value === 'number'
  ? Number.isSafeInteger(value)
  : typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX)

/** An int64: a bigint in every handler, whatever the JSON carried (validation converts it). */
export const Int64 = (options: SchemaOptions = {}) =>
  Type.Unsafe<bigint>({ ...options, [Kind]: 'Int64', type: 'integer', format: 'int64' })
