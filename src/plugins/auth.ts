import bearerAuth from '@fastify/bearer-auth'
import type { TSchema } from '@sinclair/typebox'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { RATE_LIMIT_HEADER_NAMES, withRateLimitHeaders } from '../../schemas/rate-limit.ts'
import { SCOPES, type Scope } from '../../schemas/scopes.ts'
import { Lockout } from './auth-lockout.ts'
import { TokenRate } from './token-rate.ts'
import {
  AuthLockedOut, AuthorizationMalformed, InsufficientScope, RateLimited, TokenExpired, TokenInvalid, TokenMissing, withHeaders
} from '../http/errors.ts'
import { authorizationProblem } from '../http/authorization.ts'
import { operationOf } from '../http/operation.ts'
import type { Token } from '../tokens/registry.ts'

export interface AuthOptions {
  /** Requests per second one token may make; 0: unlimited. */
  ratePerToken: number
  /** Rejected tokens per minute one client address may send before it is refused. */
  failuresPerMinute: number
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a token needs for this route, when it is registered behind the bearer token. */
    scope?: Scope
  }
}

const REALM = 'Bearer realm="plant-store"'
// In lower case, as Fastify keeps every header's name.
const [LIMIT_HEADER, REMAINING_HEADER, RESET_HEADER] = RATE_LIMIT_HEADER_NAMES.map((name) => name.toLowerCase())

/**
 * Guards every route registered beside it with a bearer token and the scope the route
 * declares (`config: { scope }`), which it also writes into the route's schema as its
 * security requirement, so the document states exactly what is enforced; a route
 * without a scope stops the start. @fastify/bearer-auth checks the scheme; the token is
 * identified by its hash in the tokens plugin's registry. Failures become messages a
 * client can act on, sent through the one error handler: 401 for no, an unknown or an
 * expired token, 403 (RFC 6750 insufficient_scope) for a token without the scope.
 * Rejected tokens are counted per client address (see Lockout): a locked-out address
 * is refused before any token is compared, and a token decided while its address is
 * locked out is refused whatever it was, so a guesser learns nothing past the limit.
 * Each token's request rate is capped (see TokenRate), and the client told its budget in
 * RateLimit headers, which are declared on the routes' responses.
 * A plugin with fastify-plugin because its hooks must reach the routes of the scope
 * that registers it.
 */
async function auth (app: FastifyInstance, { ratePerToken, failuresPerMinute }: AuthOptions): Promise<void> {
  app.addHook('onRoute', (route) => {
    const scope = route.config?.scope
    if (scope === undefined || !Object.hasOwn(SCOPES, scope)) {
      throw new Error(`${String(route.method)} ${route.url} is behind the bearer token but declares no scope: give it config: { scope }`)
    }
    route.schema = { ...route.schema, security: [{ bearerAuth: [scope] }] }
    if (ratePerToken > 0 && route.schema.response !== undefined) {
      route.schema.response = withRateLimitHeaders(route.schema.response as Record<string, TSchema>)
    }
  })
  await app.register(bearerAuth, {
    keys: [],
    auth: (presented, request) => {
      request.token = app.tokens.identify(presented) ?? null
      return request.token !== null
    },
    addHook: false,
    // RFC 7235: the scheme name is case-insensitive ("bearer x" is fine).
    specCompliance: 'rfc6749',
    // The request's own log line already records the 401.
    verifyErrorLogLevel: 'debug'
  })
  const lockout = new Lockout(failuresPerMinute, 60_000)
  const perToken = ratePerToken === 0 ? undefined : new TokenRate(ratePerToken, 1000)
  const verify = app.verifyBearerAuth as NonNullable<typeof app.verifyBearerAuth>
  const verified = async (request: FastifyRequest, reply: FastifyReply) =>
    await new Promise<FastifyError | undefined>((resolve) => verify(request, reply, (err) => resolve(err as FastifyError | undefined)))

  app.addHook('onRequest', async (request, reply) => {
    const locked = lockout.retryAfter(request.ip)
    if (locked > 0) throw tooMany(new AuthLockedOut(), locked)
    // A header that cannot hold a bearer token guesses nothing: it is explained, not counted.
    const problem = authorizationProblem(request.headers.authorization)
    if (problem !== undefined) {
      throw withHeaders(new AuthorizationMalformed(problem), { 'www-authenticate': `${REALM}, error="invalid_request"` })
    }
    const err = await verified(request, reply)
    // Decided again now, as the token's answer is known: guesses pipelined together all
    // passed the check above, and only those within the limit may learn their answer.
    const lockedNow = lockout.retryAfter(request.ip)
    // A request without credentials guesses nothing; one with a wrong token does.
    if (err?.code === 'FST_BEARER_AUTH_INVALID_AUTHORIZATION_HEADER' && lockout.fail(request.ip)) {
      request.log.warn({ client: request.ip, code: 'auth_locked_out', failures: failuresPerMinute },
        `client ${request.ip} locked out for a minute: ${failuresPerMinute} rejected tokens`)
    }
    if (lockedNow > 0) throw tooMany(new AuthLockedOut(), lockedNow)
    if (err !== undefined) throw refusal(err)
    // An expired token was a real one: presenting it guesses nothing, so it is not counted.
    const token = request.token as Token
    if (token.expiresAt !== undefined && token.expiresAt.getTime() <= Date.now()) throw expired(token.expiresAt)
    if (perToken !== undefined) {
      // The IETF RateLimit header fields, on every answer once the token is known.
      const { remaining, resetSeconds } = perToken.take(token.name)
      reply.header(LIMIT_HEADER, ratePerToken)
      reply.header(REMAINING_HEADER, Math.max(0, remaining))
      reply.header(RESET_HEADER, resetSeconds)
      if (remaining < 0) throw tooMany(new RateLimited(ratePerToken), resetSeconds)
    }
    const scope = request.routeOptions.config.scope as Scope
    if (!token.scopes.has(scope)) {
      throw withHeaders(new InsufficientScope(scope, operationOf(request)), {
        'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"`
      })
    }
  })
}

function refusal (err: FastifyError): Error {
  switch (err.code) {
    case 'FST_BEARER_AUTH_MISSING_AUTHORIZATION_HEADER':
      return withHeaders(new TokenMissing(), { 'www-authenticate': REALM })
    case 'FST_BEARER_AUTH_INVALID_AUTHORIZATION_HEADER':
      return withHeaders(new TokenInvalid(), { 'www-authenticate': `${REALM}, error="invalid_token"` })
    default:
      return err // an exception inside the check: the error handler answers 500 and logs it
  }
}

function expired (at: Date): Error {
  return withHeaders(new TokenExpired(at.toISOString()), {
    'www-authenticate': `${REALM}, error="invalid_token", error_description="the token expired"`
  })
}

function tooMany (error: Error, retryAfterSeconds: number): Error {
  return withHeaders(error, { 'retry-after': String(Math.max(1, retryAfterSeconds)) })
}

export default fp(auth, { name: 'auth', fastify: '5.x', dependencies: ['tokens'] })
