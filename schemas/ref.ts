import { Type, type Static, type TSchema } from '@sinclair/typebox'

/**
 * A typed reference to a shared schema, so the document names the component instead of
 * inlining it; as a response, with its description and the headers it carries.
 */
export function ref<T extends TSchema> (schema: T, options: { description?: string, headers?: Record<string, TSchema> } = {}) {
  if (schema.$id === undefined) throw new Error('ref() takes a shared schema, one with an $id')
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id, options))
}
