import { Type, type TSchema } from '@sinclair/typebox'

/**
 * Response headers carry an `always` mark that `requiredHeaders` turns into `required: true`
 * (@fastify/swagger writes only schema and description); `requestHeaders` are document-only.
 */

const REQUIRED = 'x-plant-store-required'

/** The header, declared on a response every answer of whose status carries it. */
export function always<T extends TSchema> (schema: T): T {
  return { ...schema, [REQUIRED]: true }
}

/** The header as declared for a response only some answers of whose status carry: those with these codes. */
export function sentWith<T extends TSchema> (schema: T, codes: string[]): T {
  return { ...schema, description: `${schema.description}. Sent with ${codes.map((code) => `\`${code}\``).join(', ')} only` }
}

/** The headers an error's answer carries, by name: what ERROR_CODES lists for each code (schemas/error.ts). */
export const ERROR_HEADERS = {
  'Retry-After': Type.Integer({ minimum: 1, description: 'Seconds to wait before trying again' }),
  'WWW-Authenticate': Type.String({
    description: 'The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with an `error` saying why the token was refused (none when there was no token) and, on a 403, the `scope` needed'
  })
}

export type ErrorHeader = keyof typeof ERROR_HEADERS

interface Operation {
  responses?: Record<string, { headers?: Record<string, { schema?: Record<string, unknown>, required?: boolean }> }>
}

/** @fastify/swagger's `transformObject`: each `always` header becomes `required: true`. */
export function requiredHeaders<T extends object> (document: T): T {
  const { paths } = document as { paths?: Record<string, Record<string, Operation>> }
  for (const item of Object.values(paths ?? {})) {
    for (const operation of Object.values(item)) {
      for (const response of Object.values(operation.responses ?? {})) {
        for (const header of Object.values(response.headers ?? {})) {
          if (header.schema?.[REQUIRED] !== true) continue
          delete header.schema[REQUIRED]
          header.required = true
        }
      }
    }
  }
  return document
}

/**
 * @fastify/swagger's `transform`: `requestHeaders` as header parameters, document only;
 * handlers read them and never refuse them (RFC 9110), so no validator runs.
 */
export function documentedRequestHeaders<S extends object> ({ schema, url }: { schema: S, url: string }): { schema: S, url: string } {
  if (schema === undefined || !('requestHeaders' in schema)) return { schema, url }
  const { requestHeaders, ...rest } = schema
  return { schema: { ...rest, headers: requestHeaders } as S, url }
}
