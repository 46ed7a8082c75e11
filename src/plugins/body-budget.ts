import { Transform, type Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Overloaded, withHeaders } from '../http/errors.ts'

export interface BodyBudgetOptions {
  /** The most bytes of request bodies being received at once, across every connection. */
  maxBytes: number
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The bytes of request bodies held now (being received or not yet parsed). */
    bodyBytesInFlight: () => number
  }
}

// A body arrives in milliseconds at network speed; one refused went past a budget others free quickly.
// Closed: the client cannot go on sending what would not be read.
const REFUSED = { 'retry-after': '1', connection: 'close' }
// Node never reads these bodies (DELETE is configured so in app.ts): nothing to hold.
const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'TRACE', 'CONNECT'])

const refusal = () => withHeaders(new Overloaded(), REFUSED)

/**
 * Bounds the bytes of bodies being received, which Fastify holds as Buffers outside the heap
 * until the body is whole: a declared length is reserved before a byte is read, a chunked
 * body as its chunks arrive; past the budget the request answers 503 and its connection is
 * closed. Runs after onRequest, so only an authorized request may hold any.
 */
async function bodyBudget (app: FastifyInstance, { maxBytes }: BodyBudgetOptions): Promise<void> {
  let inFlight = 0
  // The bytes each request holds, released once parsed or answered.
  const holds = new WeakMap<FastifyRequest, { bytes: number }>()
  app.decorate('bodyBytesInFlight', () => inFlight)

  const release = (request: FastifyRequest): void => {
    const hold = holds.get(request)
    if (hold === undefined) return
    inFlight -= hold.bytes
    hold.bytes = 0
  }

  function reserve (request: FastifyRequest, reply: FastifyReply, bytes: number): boolean {
    if (inFlight + bytes > maxBytes) return false
    inFlight += bytes
    let hold = holds.get(request)
    if (hold === undefined) {
      hold = { bytes: 0 }
      holds.set(request, hold)
      // 'close' comes once the answer is sent or the connection is gone, whichever is first.
      reply.raw.once('close', () => release(request))
    }
    hold.bytes += bytes
    return true
  }

  app.addHook('preParsing', (request, reply, payload, done) => {
    const declared = request.headers['content-length']
    if (BODYLESS.has(request.method) || (declared === undefined && request.headers['transfer-encoding'] === undefined)) {
      return done(null, payload)
    }
    if (declared !== undefined) {
      const length = Number(declared)
      // Fastify refuses a body declared past its limit without reading it.
      if (!(length <= request.routeOptions.bodyLimit)) return done(null, payload)
      return reserve(request, reply, length) ? done(null, payload) : done(refusal())
    }
    done(null, counted(payload, (bytes) => reserve(request, reply, bytes)))
  })
  // Parsed: the body's Buffers are dropped.
  app.addHook('preValidation', (request, _reply, done) => {
    release(request)
    done()
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

export default fp(bodyBudget, { name: 'body-budget', fastify: '5.x' })
