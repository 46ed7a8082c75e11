import { Type, type TSchema } from '@sinclair/typebox'

// The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers), as the auth
// plugin writes them from its TokenRate.
const RateLimitHeaders = {
  'RateLimit-Limit': Type.Integer({ description: 'Requests this token may make a second (RATE_LIMIT_PER_TOKEN)' }),
  'RateLimit-Remaining': Type.Integer({ description: 'Requests this token has left in the current second; 0 on its 429' }),
  'RateLimit-Reset': Type.Integer({ description: 'Seconds until this token\'s budget is full again' })
}

const RetryAfter = Type.Integer({ description: 'Seconds to wait before trying again' })

/**
 * A guarded route's responses with the per-token rate-limit headers declared where a
 * client looks for them: its successes (2xx, 304) and its 429 (with Retry-After). Every
 * answer after the token is identified carries them; those before (401, the 429 of a
 * locked-out address) do not. New schemas: the given ones may be shared by other routes.
 */
export function withRateLimitHeaders (responses: Record<string, TSchema>): Record<string, TSchema> {
  return Object.fromEntries(Object.entries(responses).map(([status, schema]) => {
    if (status === '429') return [status, { ...schema, headers: { ...schema.headers, ...RateLimitHeaders, 'Retry-After': RetryAfter } }]
    if (/^2\d\d$/.test(status) || status === '304') return [status, { ...schema, headers: { ...schema.headers, ...RateLimitHeaders } }]
    return [status, schema]
  }))
}
