import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'

export type Json = Record<string, any>

/**
 * Validates values against the schema at a JSON pointer into the OpenAPI document, its
 * $refs resolved there. `int64` says which numbers pass the int64 format: an example must
 * be exact in the document, an answer read by JSON.parse cannot be beyond 2^53.
 */
export function schemaChecker (doc: Json, int64: (value: number) => boolean): (pointer: string) => ValidateFunction {
  // The document's own dialect (OpenAPI 3.1 schemas are JSON Schema 2020-12), strict:
  // a keyword or format it does not know fails the test rather than passing unchecked.
  const ajv = new Ajv2020({ allErrors: true })
  ajv.addFormat('int32', { type: 'number', validate: (value) => Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31 })
  ajv.addFormat('int64', { type: 'number', validate: int64 })
  ajv.addFormat('uri', (value) => URL.canParse(value))
  ajv.addFormat('date-time', (value) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) && !Number.isNaN(Date.parse(value)))
  // The document's own fields (openapi, info, paths…) are no schema keywords: declared
  // to Ajv as keywords without a meaning, so that it takes the document as the root of its schemas.
  ajv.addVocabulary(Object.keys(doc))
  ajv.addSchema(doc, 'openapi.json')
  return (pointer) => ajv.compile({ $ref: `openapi.json#${pointer.split('/').map(encodeURIComponent).join('/')}` })
}

/** A JSON pointer's segment for a key: `/plants/{id}` is `~1plants~1{id}`. */
export function pointerSegment (key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1')
}
