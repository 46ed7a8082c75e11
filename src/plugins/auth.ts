import bearerAuth from '@fastify/bearer-auth'
import rateLimit from '@fastify/rate-limit'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Lockout } from './auth-lockout.js'
import { TooManyRequests, Unauthorized, withHeaders } from '../http/errors.js'

export interface AuthOptions {
  tokens: string[]
  /** Requests per second one token may make; 0: unlimited. */
  ratePerToken: number
  /** Rejected tokens per minute one client address may send before it is refused. */
  failuresPerMinute: number
}

const REALM = 'Bearer realm="plant-store"'

const LOCKED_OUT = 'too many rejected tokens from this address'

/**
 * Guards every route registered beside it with a bearer token. @fastify/bearer-auth
 * compares tokens in constant time; its failures become messages a client can act on,
 * sent through the one error handler. Rejected tokens are counted per client address
 * (see Lockout): a locked-out address is refused before any token is compared, and a
 * token decided while its address is locked out is refused whatever it was, so a
 * guesser learns nothing past the limit. @fastify/rate-limit caps each token's request
 * rate. A plugin with fastify-plugin because its hook must reach the routes of the
 * scope that registers it.
 */
async function auth (app: FastifyInstance, { tokens, ratePerToken, failuresPerMinute }: AuthOptions): Promise<void> {
  await app.register(bearerAuth, {
    keys: tokens,
    addHook: false,
    // RFC 7235: the scheme name is case-insensitive ("bearer x" is fine).
    specCompliance: 'rfc6749',
    // The request's own log line already records the 401.
    verifyErrorLogLevel: 'debug'
  })
  await app.register(rateLimit, { global: false })
  const lockout = new Lockout(failuresPerMinute, 60_000)
  const perToken = ratePerToken === 0
    ? undefined
    : app.createRateLimit({ max: ratePerToken, timeWindow: 1000, keyGenerator: bearerToken })
  const verify = app.verifyBearerAuth as NonNullable<typeof app.verifyBearerAuth>
  const verified = async (request: FastifyRequest, reply: FastifyReply) =>
    await new Promise<FastifyError | undefined>((resolve) => verify(request, reply, (err) => resolve(err as FastifyError | undefined)))

  app.addHook('onRequest', async (request, reply) => {
    const locked = lockout.retryAfter(request.ip)
    if (locked > 0) throw tooMany(LOCKED_OUT, locked)
    const err = await verified(request, reply)
    // Decided again now, as the token's answer is known: guesses pipelined together all
    // passed the check above, and only those within the limit may learn their answer.
    const lockedNow = lockout.retryAfter(request.ip)
    // A request without credentials guesses nothing; one with a wrong token does.
    if (err?.code === 'FST_BEARER_AUTH_INVALID_AUTHORIZATION_HEADER') lockout.fail(request.ip)
    if (lockedNow > 0) throw tooMany(LOCKED_OUT, lockedNow)
    if (err !== undefined) throw refusal(err)
    if (perToken === undefined) return
    const rate = await perToken(request)
    if (!rate.isAllowed && rate.isExceeded) {
      throw tooMany(`more than ${ratePerToken} requests a second with this token`, rate.ttlInSeconds)
    }
  })
}

function refusal (err: FastifyError): Error {
  switch (err.code) {
    case 'FST_BEARER_AUTH_MISSING_AUTHORIZATION_HEADER':
      return withHeaders(new Unauthorized('missing bearer token: send the header "Authorization: Bearer <token>"'), { 'www-authenticate': REALM })
    case 'FST_BEARER_AUTH_INVALID_AUTHORIZATION_HEADER':
      return withHeaders(new Unauthorized('the bearer token is not valid'), { 'www-authenticate': `${REALM}, error="invalid_token"` })
    default:
      return err // an exception inside the check: the error handler answers 500 and logs it
  }
}

function tooMany (message: string, retryAfterSeconds: number): Error {
  return withHeaders(new TooManyRequests(message), { 'retry-after': String(Math.max(1, retryAfterSeconds)) })
}

function bearerToken (request: FastifyRequest): string {
  // Only called once the header has been verified as "Bearer <token>".
  return (request.headers.authorization ?? '').slice('bearer '.length).trim()
}

export default fp(auth, { name: 'auth', fastify: '5.x' })
