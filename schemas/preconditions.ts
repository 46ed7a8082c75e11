import { Type } from '@sinclair/typebox'
import type { ErrorEntry } from './error.ts'

// The preconditions of writes (RFC 9110 13.1, 13.2): read by the handlers (src/http/etag.ts),
// in the document only, as If-None-Match on a read is.

// The examples let "Try it out", which sends them all, write: If-Unmodified-Since beside If-Match is ignored.
const unmodifiedSince = Type.Optional(Type.String({
  description: 'Not supported: plants keep no modification date. Without `If-Match` it is refused (400 `precondition_unsupported`) rather than ignored, so a write it was to guard never happens unconditionally; with `If-Match` it is ignored (RFC 9110 13.1.4)',
  examples: ['Sat, 28 Nov 2026 09:14:03 GMT']
}))

/** The preconditions of PUT and DELETE /plants/{id}. */
export const PlantPreconditions = Type.Object({
  'If-Match': Type.Optional(Type.String({
    description: 'The `ETag` of the plant as the client read it (a list of them, compared strongly, or `*` for any existing plant): when the plant is no longer that one, the answer is a 412 and nothing is written. A weak or malformed entry matches nothing',
    examples: ['"TG-sn9ffrhRIQH8Vnr-vVM"']
  })),
  'If-None-Match': Type.Optional(Type.String({
    description: 'An `ETag` the plant must not have (a list of them, compared weakly), or `*` (there must be no such plant, so a write of an existing one is a 412): when the plant has it, the answer is a 412 and nothing is written',
    examples: ['"bOW8N2NaL5pMvtiOyZ3iGj"']
  })),
  'If-Unmodified-Since': unmodifiedSince
})

/** The preconditions of POST /plants: its target is the collection, which always exists and has no ETag. */
export const CollectionPreconditions = Type.Object({
  'If-Match': Type.Optional(Type.String({ description: '`*` is met (the collection exists); any other value never is: a 412, nothing written', examples: ['*'] })),
  'If-None-Match': Type.Optional(Type.String({
    description: '`*` is never met (the collection exists): a 412, nothing written; a list of tags always is (the collection has none)',
    examples: ['"bOW8N2NaL5pMvtiOyZ3iGj"']
  })),
  'If-Unmodified-Since': unmodifiedSince
})

/** The causes of a precondition's answers: ERROR_CODES holds them (schemas/error.ts). */
export const PRECONDITION_ERROR_CODES = {
  precondition_unsupported: {
    status: 400,
    meaning: 'A write sent `If-Unmodified-Since` without `If-Match`: plants keep no modification date, so it cannot be evaluated, and the write would otherwise be unconditional. Nothing was written; send `If-Match` with the `ETag` of a read instead.',
    example: 'If-Unmodified-Since cannot be evaluated: plants keep no modification date; send If-Match with the ETag of a read'
  },
  precondition_failed: {
    status: 412,
    meaning: 'A write\'s precondition is false for the plant as it is now: its `If-Match` names no current `ETag` (the plant changed since it was read, or the header names no strong tag), or its `If-None-Match` names the current one or is `*`. On `POST /plants` (the collection, which always exists and has no `ETag`): an `If-Match` other than `*`, or `If-None-Match: *`. Nothing was written; read the plant again.',
    example: 'plant 1 is not as the request\'s If-Match or If-None-Match require (it changed since it was read?): nothing was written'
  }
} as const satisfies Record<string, ErrorEntry>
