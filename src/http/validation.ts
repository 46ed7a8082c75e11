import { Kind, Type, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify'
import { INT64_MAX, INT64_MIN } from '../../schemas/index.ts'
import { HTTP_URL_PATTERN } from '../../schemas/url.ts'
import { UnknownParameter, withDetails } from './errors.ts'
import { operationName } from './operation.ts'

// TypeBox, not Ajv, which coerces body types and cannot check an int64 exactly. Once
// valid, every int64 is a bigint, converted here only.

// An int64 needs at most 19 digits; a longer string stays a string, never a huge BigInt.
const INTEGER = /^-?\d{1,19}$/

/** The query of an operation that takes no parameters: any one sent is unknown_parameter. */
export const NO_QUERY = Type.Object({}, { additionalProperties: false })

// An answer names at most this many of the parameters that should not have been sent.
const MAX_NAMED = 10
const MAX_NAME_LENGTH = 40

export function buildValidatorCompiler (references: TSchema[]): FastifySchemaCompiler<TSchema> {
  return ({ schema, httpPart, method, url }) => {
    const checker = TypeCompiler.Compile(schema, references)
    const fromStrings = httpPart !== 'body'
    const operation = operationName(method, url)
    // A body is a reference to a shared schema: its fields are those of the schema named.
    const shape: TSchema = references.find((reference) => reference.$id !== undefined && reference.$id === schema.$ref) ?? schema
    const int64s = Object.entries<TSchema>(shape.properties ?? {})
      .filter(([, property]) => property[Kind] === 'Int64').map(([key]) => key)
    return (input: unknown) => {
      const value = fromStrings ? convertIntegers(schema, input) : input
      if (!checker.Check(value)) {
        const unknown = schema.additionalProperties === false && httpPart === 'querystring' && unknownParameter(operation, schema, value)
        return { error: unknown === false ? describeErrors(checker.Errors(value)) : unknown }
      }
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

/** Refuses unknown query parameters (a misspelt `?page=2` would loop on page one), or false. */
function unknownParameter (operation: string, schema: TSchema, query: unknown): Error | false {
  const known = Object.keys(schema.properties ?? {})
  const unknown = Object.keys(query as object).filter((name) => !known.includes(name))
  if (unknown.length === 0) return false
  const offer = known.length === 0 ? 'takes no query parameters' : `takes only ${known.join(', ')}`
  const named = unknown.slice(0, MAX_NAMED).map((name) => name.length > MAX_NAME_LENGTH ? `${name.slice(0, MAX_NAME_LENGTH)}…` : name)
  const message = `${operation} ${offer}; unknown: ${named.join(', ')}${unknown.length > MAX_NAMED ? ', …' : ''}`
  return withDetails(new UnknownParameter(message), named.map((name) => ({
    field: `querystring/${name}`,
    message: `is not a parameter of this operation, which ${offer}`
  })))
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
    case ValueErrorType.StringPattern: return schema.pattern === HTTP_URL_PATTERN ? 'must start with http:// or https:// and hold no user name or password' : `must match ${schema.pattern}`
    case ValueErrorType.StringFormat: return schema.format === 'uri' ? 'must be an absolute URL' : `must be in the ${schema.format} format`
    default: return message
  }
}
