import { Kind, Type, TypeRegistry, type SchemaOptions } from '@sinclair/typebox'

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

// JSON Schema validators only know JS numbers, which cannot tell 2^63-1 from 2^63.
// A custom kind lets the TypeBox compiler check the exact value (the body parser gives
// a number below 2^53 and a bigint above, path and query values arrive as bigints); the
// document still says `type: integer, format: int64`.
TypeRegistry.Set('Int64', (_schema, value) => typeof value === 'number'
  ? Number.isSafeInteger(value)
  : typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX)

/** An int64: a bigint in every handler, whatever the JSON carried (validation converts it). */
export const Int64 = (options: SchemaOptions = {}) =>
  Type.Unsafe<bigint>({ ...options, [Kind]: 'Int64', type: 'integer', format: 'int64' })
