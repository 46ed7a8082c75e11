import { Type } from '@sinclair/typebox'
import type { ErrorEntry } from './error.ts'

// The Idempotency-Key of POST /webhooks (draft-ietf-httpapi-idempotency-key-header-07).

/** How long a key and the answer it stands for are kept, at least. */
export const IDEMPOTENCY_KEY_HOURS = 24
/** The most keys one token may have kept at once (each at most a header's length). */
export const MAX_IDEMPOTENCY_KEYS = 1000
/** The longest Idempotency-Key field value, quotes and escapes included. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 256
/** How long a request holds its key before a retry may take it over (its instance stopped mid-request). */
export const IDEMPOTENCY_KEY_LEASE_SECONDS = 60

const example = '"8e03978e-40d5-43e8-bc93-6894a57f9324"'

// Read by the handler (src/webhooks/idempotency-key.ts), in the document only, as If-Match is.
export const IdempotencyKeyHeader = Type.Object({
  'Idempotency-Key': Type.Optional(Type.String({
    minLength: 1,
    maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
    description: `Makes a retry safe (draft-ietf-httpapi-idempotency-key-header-07): a Structured Field string, quoted (\`${example}\`; a UUID is a good key), or the same characters bare, if they are letters, digits and \`.-_~:+/=\`. Kept ${IDEMPOTENCY_KEY_HOURS} hours per token: the same key with the same body answers the original answer again, status, subscription and secret, and creates nothing; with another body, a 422; while the first request is still running, a 409. A request that failed releases its key. At most ${MAX_IDEMPOTENCY_KEYS} keys per token at once`,
    examples: [example]
  }))
})

/** The causes of the key's answers: ERROR_CODES holds them (schemas/error.ts). */
export const IDEMPOTENCY_ERROR_CODES = {
  idempotency_key_invalid: {
    status: 400,
    meaning: `The \`Idempotency-Key\` is not a Structured Field string of 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters (quoted, or bare of letters, digits and \`.-_~:+/=\`).`,
    example: 'the Idempotency-Key is not a Structured Field string; send a quoted one, such as Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"'
  },
  idempotency_key_in_use: {
    status: 409,
    meaning: 'A request with this `Idempotency-Key` is still running (on this instance or another): retry after `Retry-After` seconds for its answer.',
    example: 'a request with this Idempotency-Key is still running; retry after the delay in Retry-After for its answer',
    headers: ['Retry-After']
  },
  subscription_deleted: {
    status: 410,
    meaning: 'The subscription this `Idempotency-Key` created was deleted since, and its secret with it: the answer cannot be given again. Subscribe with a new key.',
    example: 'the subscription wh_3f0c2a9d5b7e4e18a1c6d2f4b8e90a17 this Idempotency-Key created was deleted since; subscribe with a new key'
  },
  idempotency_key_reused: {
    status: 422,
    meaning: `This \`Idempotency-Key\` was used within the last ${IDEMPOTENCY_KEY_HOURS} hours with another body (another \`url\` or \`events\`). Nothing was done.`,
    example: `this Idempotency-Key was used with another body within the last ${IDEMPOTENCY_KEY_HOURS} hours; use a new key for a new request`
  },
  idempotency_keys_exhausted: {
    status: 429,
    meaning: `This token has ${MAX_IDEMPOTENCY_KEYS} \`Idempotency-Key\`s kept already, the most it may: retry after \`Retry-After\` seconds, when the oldest expires, or send the request without a key.`,
    example: `this token has ${MAX_IDEMPOTENCY_KEYS} Idempotency-Keys kept already, the most it may; retry after the delay in Retry-After`,
    headers: ['Retry-After']
  }
} as const satisfies Record<string, ErrorEntry>
