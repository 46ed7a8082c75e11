import { Type, type TSchema } from '@sinclair/typebox'
import { always, sentWith } from './headers.ts'

// The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers) that
// @fastify/rate-limit writes with enableDraftSpec: limit, remaining, reset.
export const RATE_LIMIT_HEADER_NAMES = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] as const
const [LIMIT, REMAINING, RESET] = RATE_LIMIT_HEADER_NAMES

const RateLimitHeaders = {
  [LIMIT]: Type.Integer({ description: 'Requests this token may make a second (RATE_LIMIT_PER_TOKEN)' }),
  [REMAINING]: Type.Integer({ description: 'Requests this token has left in the current second; 0 on its 429' }),
  [RESET]: Type.Integer({ description: 'Seconds until this token\'s budget is full again' })
}

const onEveryAnswer = Object.fromEntries(Object.entries(RateLimitHeaders).map(([name, schema]) => [name, always(schema)]))
const onRateLimited = Object.fromEntries(Object.entries(RateLimitHeaders).map(([name, schema]) => [name, sentWith(schema, ['rate_limited'])]))

/** Whether a guarded operation's answers of this status declare the rate-limit headers: its successes and its 429. */
export function declaresRateLimit (status: string): boolean {
  return /^2\d\d$/.test(status) || status === '304' || status === '429'
}

/**
 * The responses with RateLimit headers: required on successes, on 429 only with
 * rate_limited (a lockout precedes the token). Copies: the given ones may be shared.
 */
export function withRateLimitHeaders (responses: Record<string, TSchema>): Record<string, TSchema> {
  return Object.fromEntries(Object.entries(responses).map(([status, schema]) => {
    if (!declaresRateLimit(status)) return [status, schema]
    return [status, { ...schema, headers: { ...schema.headers, ...(status === '429' ? onRateLimited : onEveryAnswer) } }]
  }))
}
