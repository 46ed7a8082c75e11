import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import { setAnswerHeaders } from '../http/answer-headers.ts'
import type { Connections } from '../http/connections.ts'
import { ShuttingDown, TargetInvalid, withHeaders } from '../http/errors.ts'
import { isOriginForm } from '../http/request-target.ts'
import type { RouteMethods } from '../http/route-methods.ts'
import { DOCS_PREFIX } from './docs.ts'

// Requests one connection may have waiting behind an answer still being written out; past
// them, the connection is closed. Browsers do not pipeline; a client that does reads as it goes.
const MAX_WAITING = 64

export interface RequestGateOptions {
  connections: Connections
  /** The methods of each path, for the 405s. */
  routes: RouteMethods
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Starts SHUTDOWN_DELAY_MS: not ready, yet serving, each answer with `Connection: close` so clients go elsewhere. */
    drain: () => void
  }
  interface FastifyRequest {
    /** Set by @fastify/cors on a preflight from an allowed origin. */
    corsPreflightEnabled?: boolean
  }
}

/**
 * Every request's one app-wide onRequest hook, in this order: a pipelined request waits for
 * the answers before its own; its answer headers are set, so that whatever answers later (a
 * 404, a 401, a crash) has them; a CORS preflight is answered; a target that is no path is a
 * 400; an unrouted request a 405 or 404, before its body is read; while the app closes, a 503
 * in the Error shape (Fastify's own has another body). fastify-plugin: it guards every route.
 */
async function requestGate (app: FastifyInstance, { connections, routes }: RequestGateOptions): Promise<void> {
  let closing = false
  let draining = false
  app.decorate('drain', () => {
    draining = true
    app.readiness.stop()
  })
  // In flight, requests finish; each connection goes as soon as it carries none.
  app.addHook('preClose', async () => {
    closing = true
    connections.closeIdle()
  })

  function admit (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    // Only the docs serve pages: the route's options are read for their paths alone.
    setAnswerHeaders(request, reply, request.url.startsWith(DOCS_PREFIX) && request.routeOptions.config.page === true)
    if (request.corsPreflightEnabled === true) {
      // Content-Length 0: a 204 without it leaves some browsers waiting for a body.
      reply.code(204).header('content-length', '0').send()
      return
    }
    if (!isOriginForm(request)) return done(new TargetInvalid())
    // No route takes OPTIONS: one that is no preflight is unrouted, though @fastify/cors routes it.
    if (request.is404 || request.method === 'OPTIONS') return done(routes.refusal(request))
    if (closing) return done(withHeaders(new ShuttingDown(), { connection: 'close' }))
    if (draining) reply.header('connection', 'close')
    done()
  }

  app.addHook('onRequest', (request, reply, done) => {
    // An injected request has no connection of the server's.
    const connection = connections.of(request.raw.socket)
    if (connection !== undefined) connection.log = request.log
    // Node gives an answer its connection once the answers before it are written out.
    if (connection === undefined || reply.raw.socket !== null) return admit(request, reply, done)
    // Node would handle every pipelined request at once and hold each answer: it stops
    // reading only once answers fill the socket's buffer, which waiting ones never do.
    if (++connection.waiting > MAX_WAITING) {
      // Those that came in the same packet after it come here too: logged once.
      if (connection.waiting === MAX_WAITING + 1) {
        request.log.info({ client: request.ip }, `connection closed: more than ${MAX_WAITING} requests pipelined behind answers it did not read`)
      }
      request.raw.socket.destroy()
      return
    }
    reply.raw.once('socket', () => {
      connection.waiting--
      admit(request, reply, done)
    })
  })
}

export default fp(requestGate, { name: 'request-gate', fastify: '5.x', dependencies: ['readiness'] })
