import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { RATE_LIMIT_HEADER_NAMES } from '../../schemas/rate-limit.ts'

// The API's methods and the request headers it reads.
const METHODS = ['GET', 'POST', 'PUT', 'DELETE']
const REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'If-None-Match', 'X-Request-Id']
// Every answer header a client may act on.
const EXPOSED_HEADERS = [
  'ETag', 'Link', 'Location', 'Retry-After', ...RATE_LIMIT_HEADER_NAMES, 'WWW-Authenticate', 'X-Request-Id'
]
// A browser asks again after this long (Chromium caps it at 2 hours anyway).
const PREFLIGHT_MAX_AGE_SECONDS = 600

/**
 * CORS for CORS_ORIGINS: CORS headers on every answer (errors too), preflights recognized
 * for the request gate to answer, before auth. No credentials: bearer tokens only, so even
 * `*` grants no visitor's authority.
 */
async function corsPlugin (app: FastifyInstance): Promise<void> {
  const origins = app.config.corsOrigins
  const any = origins.includes('*')
  const allowed = new Set(origins)
  await app.register(cors, {
    // A function, not the list: an origin not allowed then gets no CORS header at all.
    origin: (origin, callback) => {
      callback(null, origin === undefined ? false : any ? '*' : allowed.has(origin))
    },
    methods: METHODS,
    allowedHeaders: REQUEST_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    // Else an OPTIONS without Access-Control-Request-Method gets a text/plain 400.
    strictPreflight: false,
    // The request gate answers the preflight, after setting the headers every answer carries.
    preflightContinue: true
  })
}

export default fp(corsPlugin, { name: 'cors', fastify: '5.x', decorators: { fastify: ['config'] } })
