import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { RATE_LIMIT_HEADER_NAMES } from '../../schemas/rate-limit.ts'

export interface CorsOptions {
  /** The exact origins whose pages may call the API, or ['*'] for any. */
  origins: string[]
}

// What a page may send: the API's methods and the request headers it reads (If-None-Match
// too, which a page sets itself to revalidate a plant).
const METHODS = ['GET', 'POST', 'DELETE']
const REQUEST_HEADERS = ['Authorization', 'Content-Type', 'If-None-Match', 'X-Request-Id']
// What a page may read besides the body: every header an answer carries for a client to act on.
const EXPOSED_HEADERS = [
  'ETag', 'Link', 'Location', 'Retry-After', ...RATE_LIMIT_HEADER_NAMES, 'WWW-Authenticate', 'X-Request-Id'
]
// A browser asks again after this long (Chromium caps it at 2 hours anyway).
const PREFLIGHT_MAX_AGE_SECONDS = 600

/**
 * Lets the pages of CORS_ORIGINS call the API from a browser, through @fastify/cors.
 * A preflight is answered 204 in the onRequest hook, before any token is asked for (a
 * browser sends none with it). Every answer to an allowed origin carries the CORS
 * headers, errors included, so the page can read the Error body; an answer to any other
 * origin carries none and the browser keeps it from the page. Registered before the
 * hook that refuses unrouted requests, so a 404 is readable too. Credentials (cookies)
 * are never allowed: the API takes only bearer tokens, which a page must send itself,
 * so even `*` lets no page act with a visitor's authority. A plugin with fastify-plugin
 * because its hooks must reach every route of the app.
 */
async function corsPlugin (app: FastifyInstance, { origins }: CorsOptions): Promise<void> {
  const any = origins.includes('*')
  const allowed = new Set(origins)
  await app.register(cors, {
    // A function rather than the list: for an origin not allowed @fastify/cors then sends
    // no CORS header at all, where with the list it would still answer the preflight.
    origin: (origin, callback) => {
      callback(null, origin === undefined ? false : any ? '*' : allowed.has(origin))
    },
    methods: METHODS,
    allowedHeaders: REQUEST_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    // Else an OPTIONS without Access-Control-Request-Method would get a text/plain 400,
    // outside the Error shape; answered as a preflight, it learns nothing more.
    strictPreflight: false
  })
  // @fastify/cors routes every OPTIONS request to itself; one it did not answer as a
  // preflight has no route of ours, and is refused before its body is read, as every
  // unrouted request is.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.method === 'OPTIONS') {
      reply.callNotFound()
      return
    }
    done()
  })
}

export default fp(corsPlugin, { name: 'cors', fastify: '5.x', dependencies: ['answer-headers'] })
