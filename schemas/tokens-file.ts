import { Type, type Static } from '@sinclair/typebox'
import { ALL_SCOPES, Scope } from './scopes.ts'

// Each description is the rule, worded to follow "must be": a refusal of the file quotes it.
export const TokenEntry = Type.Object({
  name: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[A-Za-z0-9._-]+$',
    description: '1 to 64 letters, digits, ".", "_" or "-", unique in the file: what the logs and the per-token rate limit call the token'
  }),
  sha256: Type.String({
    pattern: '^[0-9a-fA-F]{64}$',
    description: '64 hex digits, unique in the file: the SHA-256 of the token, never the token itself'
  }),
  scopes: Type.Array(Scope, {
    minItems: 1,
    description: `a list of one or more of ${ALL_SCOPES.join(', ')}: what the token may do`
  }),
  expiresAt: Type.Optional(Type.String({
    // RFC 3339 date-time; src/tokens/file.ts also checks that it names a real moment.
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$',
    description: 'an RFC 3339 date-time such as 2027-01-01T00:00:00Z: from then on the token answers 401 (without it the token does not expire)'
  }))
}, {
  // A misspelt field (`expires`) must not pass unnoticed: the token would never expire.
  additionalProperties: false,
  description: 'One token of API_TOKENS_FILE'
})

export type TokenEntry = Static<typeof TokenEntry>

/** The most entries a tokens file may hold: every request's token is compared with each. */
export const MAX_TOKENS = 1000

/** API_TOKENS_FILE: a JSON array of entries, each a token known by its hash only. */
export const TokensFile = Type.Array(TokenEntry, { maxItems: MAX_TOKENS })
