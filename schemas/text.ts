import { Kind, Type, TypeRegistry, type SchemaOptions } from '@sinclair/typebox'

/** A string's length in code points, as JSON Schema's maxLength counts (.length counts UTF-16 units). */
function codePoints (text: string, atMost: number): number {
  if (text.length <= atMost) return text.length // cannot exceed: skip the count
  let count = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    // The low half of a surrogate pair belongs to the code point counted before it.
    if (unit < 0xdc00 || unit > 0xdfff) count++
  }
  return count
}

// TypeBox checks maxLength against .length; a custom kind counts what the document says.
TypeRegistry.Set<{ maxLength: number }>('Text', (schema, value) =>
  typeof value === 'string' && codePoints(value, schema.maxLength) <= schema.maxLength)

/** A string of at most `maxLength` code points; the document says `type: string, maxLength`. */
export const Text = (options: SchemaOptions & { maxLength: number }) =>
  Type.Unsafe<string>({ ...options, [Kind]: 'Text', type: 'string' })
