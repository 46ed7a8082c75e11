import bearerAuth from '@fastify/bearer-auth'
import type { FastifyError, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Unauthorized } from './http-errors.js'

export interface AuthOptions {
  tokens: string[]
}

const REALM = 'Bearer realm="plant-store"'

/**
 * Guards every route registered beside it with a bearer token. @fastify/bearer-auth
 * compares tokens in constant time; its failures are mapped here to messages a client
 * can act on and sent through the one error handler. A plugin with fastify-plugin
 * because its hook must reach the routes of the scope that registers it.
 */
async function auth (app: FastifyInstance, { tokens }: AuthOptions): Promise<void> {
  await app.register(bearerAuth, {
    keys: tokens,
    addHook: false,
    // RFC 7235: the scheme name is case-insensitive ("bearer x" is fine).
    specCompliance: 'rfc6749',
    // One line per request already records the 401; this one would be noise.
    verifyErrorLogLevel: 'debug'
  })
  const verify = app.verifyBearerAuth as NonNullable<typeof app.verifyBearerAuth>
  app.addHook('onRequest', (request, reply, done) => {
    verify(request, reply, (error?: Error) => {
      const err = error as FastifyError | undefined
      if (err === undefined) return done()
      if (err.code === 'FST_BEARER_AUTH_MISSING_AUTHORIZATION_HEADER') {
        return done(unauthorized('missing bearer token: send the header "Authorization: Bearer <token>"', REALM))
      }
      if (err.code === 'FST_BEARER_AUTH_INVALID_AUTHORIZATION_HEADER') {
        return done(unauthorized('the bearer token is not valid', `${REALM}, error="invalid_token"`))
      }
      // An exception inside the check: the error handler answers 500 and logs it.
      done(err)
    })
  })
}

function unauthorized (message: string, challenge: string): Error {
  return Object.assign(new Unauthorized(message), { headers: { 'www-authenticate': challenge } })
}

export default fp(auth, { name: 'auth' })
