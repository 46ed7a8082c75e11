import { Transform, type Readable } from 'node:stream'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Overloaded, withHeaders } from '../http/errors.ts'
import { parseJsonBody } from '../http/json-body.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The bytes of request bodies held now (being received or not yet parsed). */
    bodyBytesInFlight: () => number
    /** Gives back what a request's body holds of the budget: once parsed, or refused. */
    releaseBody: (request: FastifyRequest) => void
  }
  interface FastifyRequest {
    /** The bytes of the budget this request's body holds. */
    bodyBytesHeld: number
  }
}

// A body arrives in milliseconds at network speed; one refused went past a budget others free quickly.
// Closed: the client cannot go on sending what would not be read.
const REFUSED = { 'retry-after': '1', connection: 'close' }
// Node never reads these bodies (DELETE is configured so in app.ts): nothing to hold.
const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'TRACE', 'CONNECT'])

const refusal = () => withHeaders(new Overloaded(), REFUSED)

/**
 * Request bodies: JSON is the only one this API takes (anything else is a 415, text/plain
 * included), parsed exactly; the bytes of bodies being received, which Fastify holds as
 * Buffers outside the heap until a body is whole, are bounded by BODY_BYTES_IN_FLIGHT. A
 * declared length is reserved before a byte is read, a chunked body as its chunks arrive;
 * past the budget the request answers 503 and its connection is closed. Reserved after
 * every onRequest hook, so only an authorized request may hold any; given back once parsed,
 * or by the error handler for a body refused (415, 413, cut off).
 */
async function bodies (app: FastifyInstance): Promise<void> {
  const maxBytes = app.config.BODY_BYTES_IN_FLIGHT
  let inFlight = 0
  app.decorateRequest('bodyBytesHeld', 0)
  app.decorate('bodyBytesInFlight', () => inFlight)
  const release = (request: FastifyRequest): void => {
    inFlight -= request.bodyBytesHeld
    request.bodyBytesHeld = 0
  }
  app.decorate('releaseBody', release)

  function reserve (request: FastifyRequest, bytes: number): boolean {
    if (inFlight + bytes > maxBytes) return false
    inFlight += bytes
    request.bodyBytesHeld += bytes
    return true
  }

  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (request: FastifyRequest, body: Buffer) => {
    release(request)
    return parseJsonBody(body)
  })

  app.addHook('preParsing', (request, _reply, payload, done) => {
    const declared = request.headers['content-length']
    if (BODYLESS.has(request.method) || (declared === undefined && request.headers['transfer-encoding'] === undefined)) {
      return done(null, payload)
    }
    if (declared !== undefined) {
      const length = Number(declared)
      // Fastify refuses a body declared past its limit without reading it.
      if (!(length <= request.routeOptions.bodyLimit)) return done(null, payload)
      return reserve(request, length) ? done(null, payload) : done(refusal())
    }
    done(null, counted(payload, (bytes) => reserve(request, bytes)))
  })
}

/** The chunked body, each chunk reserved as it arrives; one past the budget fails the body. */
function counted (payload: Readable, reserve: (bytes: number) => boolean): Readable {
  const counter = new Transform({
    transform (chunk: Buffer, _encoding, next) {
      if (reserve(chunk.length)) next(null, chunk)
      else next(refusal())
    }
  })
  payload.on('error', (error) => counter.destroy(error))
  return payload.pipe(counter)
}

export default fp(bodies, { name: 'bodies', fastify: '5.x', decorators: { fastify: ['config'] } })
