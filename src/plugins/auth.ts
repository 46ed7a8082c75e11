import bearerAuth from '@fastify/bearer-auth'
import rateLimit from '@fastify/rate-limit'
import type { TSchema } from '@sinclair/typebox'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { withRateLimitHeaders } from '../../schemas/rate-limit.ts'
import { SCOPES, type Scope } from '../../schemas/scopes.ts'
import { Lockout } from './auth-lockout.ts'
import { MonotonicStore } from './rate-store.ts'
import {
  AuthLockedOut, AuthorizationMalformed, InsufficientScope, RateLimited, TokenExpired, TokenInvalid, TokenMissing, withHeaders
} from '../http/errors.ts'
import { operationOf } from '../http/operation.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a token needs for this route, when it is registered behind the bearer token. */
    scope?: Scope
  }
}

const REALM = 'Bearer realm="plant-store"'

/**
 * Guards the routes of the scope that registers it, in one onRequest hook, in this order:
 * overload (nothing is spent on a request the service cannot take); the bearer token
 * (@fastify/bearer-auth reads the header, the tokens registry looks the token up; a wrong
 * one from a locked-out address answers 429), its expiry, its rate (@fastify/rate-limit),
 * the route's `config: { scope }`. Every refusal goes to the one error handler.
 */
async function auth (app: FastifyInstance): Promise<void> {
  const { RATE_LIMIT_PER_TOKEN: ratePerToken, AUTH_FAILURE_LIMIT: failuresPerMinute } = app.config
  // The document states exactly what is enforced: the scope, and the RateLimit headers.
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

  // The lockout refuses guesses, not callers: a token that checks out is served whatever its
  // address sent (behind NAT or a proxy, a neighbour's guesses). The tokens' entropy bounds
  // guessing then, not the lockout (docs/security.md).
  const lockout = new Lockout(failuresPerMinute, 60_000)
  // Requests whose bearer token the registry does not know: guesses, unlike headers of another
  // scheme; with the seconds of lockout left when the address was locked out already.
  const guesses = new WeakMap<FastifyRequest, number>()
  await app.register(bearerAuth, {
    keys: [],
    // Synchronous, so a guess counts before the next request is checked.
    auth: (presented, request) => {
      const token = app.tokens.identify(presented)
      if (token !== undefined) request.token = token
      else if (presented !== '') countGuess(request)
      return token !== undefined
    },
    addHook: false,
    specCompliance: 'rfc6749', // the scheme name is case-insensitive (RFC 7235)
    verifyErrorLogLevel: 'debug' // the request's own log line records the 401
  })
  function countGuess (request: FastifyRequest): void {
    const locked = lockout.retryAfter(request.ip)
    guesses.set(request, locked)
    if (locked === 0 && lockout.fail(request.ip)) {
      request.log.warn({ client: request.ip, code: 'auth_locked_out', failures: failuresPerMinute },
        `client ${request.ip} locked out for a minute: ${failuresPerMinute} rejected tokens; its wrong tokens answer 429, valid ones are served`)
    }
  }

  let limitRate: ((request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) | undefined
  if (ratePerToken > 0) {
    await app.register(rateLimit, {
      global: false,
      max: ratePerToken,
      timeWindow: 1000,
      keyGenerator: (request) => request.token!.name,
      store: MonotonicStore,
      enableDraftSpec: true, // the IETF RateLimit-* header names
      errorResponseBuilder: (_request, { max }) => new RateLimited(max)
    })
    limitRate = app.rateLimit()
  }

  // A callback hook, not an async one: every API request passes through it (docs/performance.md).
  const verify = app.verifyBearerAuth!
  const overloaded = app.overloaded
  app.addHook('onRequest', (request, reply, done) => {
    const overload = overloaded()
    if (overload !== undefined) return done(overload)
    verify(request, reply, (err?: Error) => {
      if (err !== undefined && err !== null) return done(refusal(err as FastifyError, guesses.get(request)))
      const { expiresAt } = request.token!
      if (expiresAt !== undefined && expiresAt.getTime() <= Date.now()) {
        return done(withHeaders(new TokenExpired(expiresAt.toISOString()), {
          'www-authenticate': `${REALM}, error="invalid_token", error_description="the token expired"`
        }))
      }
      if (limitRate === undefined) return done(outOfScope(request))
      limitRate(request, reply).then(() => done(outOfScope(request)), done)
    })
  })
}

/** The refusal of a token without the scope the route names; undefined when it has it. */
function outOfScope (request: FastifyRequest): Error | undefined {
  const scope = request.routeOptions.config.scope!
  if (request.token!.scopes.has(scope)) return undefined
  return withHeaders(new InsufficientScope(scope, operationOf(request)), {
    'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"`
  })
}

/**
 * bearer-auth's refusal as the service's: it calls the lookup only for a "Bearer <token>"
 * header. `lockedFor`: set for a guess, the seconds its address is locked out (0: it is not).
 */
function refusal (err: FastifyError, lockedFor: number | undefined): Error {
  switch (err.code) {
    case 'FST_BEARER_AUTH_MISSING_AUTHORIZATION_HEADER':
      return withHeaders(new TokenMissing(), { 'www-authenticate': REALM })
    case 'FST_BEARER_AUTH_INVALID_AUTHORIZATION_HEADER':
      if (lockedFor === undefined) return withHeaders(new AuthorizationMalformed(), { 'www-authenticate': `${REALM}, error="invalid_request"` })
      return lockedFor > 0
        ? withHeaders(new AuthLockedOut(), { 'retry-after': String(lockedFor) })
        : withHeaders(new TokenInvalid(), { 'www-authenticate': `${REALM}, error="invalid_token"` })
    default:
      return err // an exception inside the lookup: the error handler answers 500 and logs it
  }
}

export default fp(auth, { name: 'auth', fastify: '5.x', decorators: { fastify: ['config'] }, dependencies: ['tokens', 'overload'] })
