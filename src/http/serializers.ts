import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

type Compile = ReturnType<ReturnType<typeof SerializerSelector>>

const buildSerializer = SerializerSelector()

/**
 * Fastify's serializer factory, with each distinct schema compiled once: Fastify compiles one
 * serializer per route and status, and most of the API's are the same few (the Error shape above all).
 */
export function sharedSerializers (...args: Parameters<typeof buildSerializer>): Compile {
  const compile = buildSerializer(...args)
  const compiled = new Map<string, ReturnType<Compile>>()
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
