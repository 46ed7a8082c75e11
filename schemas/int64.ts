import { Kind, Type, TypeRegistry, type SchemaOptions } from '@sinclair/typebox'

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

/**
 * What an int64 field holds after parsing: a number while it is a safe integer,
 * a bigint beyond 2^53, where a number would silently round.
 */
export type Int64Value = number | bigint

function isInt64 (value: unknown): value is Int64Value {
  if (typeof value === 'number') return Number.isSafeInteger(value)
  return typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX
}

/** The canonical in-process form of an int64: a number below 2^53, a bigint above. */
export function toInt64Value (value: bigint): Int64Value {
  return value >= Number.MIN_SAFE_INTEGER && value <= Number.MAX_SAFE_INTEGER ? Number(value) : value
}

// JSON Schema validators only know JS numbers, which cannot tell 2^63-1 from 2^63.
// A custom kind lets the TypeBox compiler check the exact value; the document still
// says `type: integer, format: int64`.
TypeRegistry.Set('Int64', (_schema, value) => isInt64(value))

export const Int64 = (options: SchemaOptions = {}) =>
  Type.Unsafe<Int64Value>({ ...options, [Kind]: 'Int64', type: 'integer', format: 'int64' })
