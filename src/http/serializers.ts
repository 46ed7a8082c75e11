import { SerializerSelector, type Serializer, type SerializerFactory } from '@fastify/fast-json-stringify-compiler'

const buildSerializer = SerializerSelector()

/**
 * Fastify's serializer factory, with each distinct schema compiled once: Fastify compiles one
 * serializer per route and status, and most of the API's are the same few (the Error shape above all).
 */
export const sharedSerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = buildSerializer(externalSchemas, options)
  const compiled = new Map<string, Serializer>()
  return (route) => {
    // What fast-json-stringify reads of a schema is its JSON (TypeBox's symbols aside).
    const key = JSON.stringify(route.schema)
    let serializer = compiled.get(key)
    if (serializer === undefined) {
      serializer = compile(route)
      compiled.set(key, serializer)
    }
    return serializer
  }
}
