import { Kind, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify'
import { INT64_MAX, INT64_MIN } from '../../schemas/index.ts'

// Fastify's default Ajv coerces body types ("5" becomes 5, null becomes "") and
// cannot check an int64 exactly. The TypeBox compiler does neither: bodies are
// checked as sent, and the Int64 kind sees the bigint the body parser produced.
// Path and query values arrive as strings: a string of digits is converted where the
// schema wants an integer, and nothing else is (TypeBox's own Convert would read
// "2.5" as 2). Once valid, every int64 becomes a bigint, here and only here: handlers
// and the store never convert an id.

// At most 19 digits: an int64 needs no more, and a longer string stays a string (and
// fails its check) rather than becoming a BigInt of attacker-chosen size.
const INTEGER = /^-?\d{1,19}$/

export function buildValidatorCompiler (references: TSchema[]): FastifySchemaCompiler<TSchema> {
  return ({ schema, httpPart }) => {
    const checker = TypeCompiler.Compile(schema, references)
    const fromStrings = httpPart !== 'body'
    // A body is a reference to a shared schema: its fields are those of the schema named.
    const shape: TSchema = references.find((reference) => reference.$id !== undefined && reference.$id === schema.$ref) ?? schema
    const int64s = Object.entries<TSchema>(shape.properties ?? {})
      .filter(([, property]) => property[Kind] === 'Int64').map(([key]) => key)
    return (input: unknown) => {
      const value = fromStrings ? convertIntegers(schema, input) : input
      if (!checker.Check(value)) return { error: describeErrors(checker.Errors(value)) }
      for (const key of int64s) {
        const record = value as Record<string, unknown>
        if (typeof record[key] === 'number') record[key] = BigInt(record[key])
      }
      return { value }
    }
  }
}

function convertIntegers (schema: TSchema, input: unknown): unknown {
  const properties: Record<string, TSchema> | undefined = schema.properties
  if (properties === undefined || input === null || typeof input !== 'object') return input
  const record = input as Record<string, unknown>
  for (const [key, property] of Object.entries(properties)) {
    const raw = record[key]
    if (typeof raw !== 'string' || !INTEGER.test(raw)) continue
    if (property[Kind] === 'Int64') record[key] = BigInt(raw)
    else if (property[Kind] === 'Integer') record[key] = Number(raw)
  }
  return record
}

/** One message per offending field, in words a client developer can act on. */
function describeErrors (errors: Iterable<ValueError>): FastifySchemaValidationError[] {
  const byPath = new Map<string, FastifySchemaValidationError>()
  for (const error of errors) {
    if (byPath.has(error.path)) continue
    byPath.set(error.path, { keyword: ValueErrorType[error.type], instancePath: error.path, schemaPath: '', params: {}, message: describe(error) })
  }
  return [...byPath.values()]
}

function describe ({ type, schema, value, message }: ValueError): string {
  if (type === ValueErrorType.ObjectRequiredProperty) return 'is required'
  if (schema[Kind] === 'Int64') return `must be an integer from ${INT64_MIN} to ${INT64_MAX}`
  if (schema[Kind] === 'Text') return typeof value === 'string' ? `must be at most ${schema.maxLength} characters long` : 'must be a string'
  switch (type) {
    // Fastify hands a missing body to the validator as null.
    case ValueErrorType.Object: return value === null ? 'must be a JSON object; it is empty or null' : 'must be a JSON object'
    case ValueErrorType.String: return 'must be a string'
    case ValueErrorType.Integer: return 'must be an integer'
    case ValueErrorType.IntegerMinimum: return `must be at least ${schema.minimum}`
    case ValueErrorType.IntegerMaximum: return `must be at most ${schema.maximum}`
    case ValueErrorType.StringMaxLength: return `must be at most ${schema.maxLength} characters long`
    case ValueErrorType.StringPattern: return `must match ${schema.pattern}`
    default: return message
  }
}
