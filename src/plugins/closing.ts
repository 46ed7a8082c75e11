import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ShuttingDown, withHeaders } from '../http/errors.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Starts SHUTDOWN_DELAY_MS: not ready, yet serving, each answer with `Connection: close` so clients go elsewhere. */
    drain: () => void
  }
}

/**
 * Once the app closes, requests in flight finish and each connection goes as soon as it
 * carries none; a request still arriving on one gets a 503 in the Error shape with
 * `Connection: close` (Fastify's own 503 has another body).
 */
async function refuseWhileClosing (app: FastifyInstance): Promise<void> {
  let closing = false
  let draining = false
  app.decorate('drain', () => {
    draining = true
    app.readiness.stop()
  })
  // forceCloseConnections 'idle' leaves silent and half-sent connections holding the close,
  // and `true` cuts requests in flight: so each connection is kept with its last answer.
  const connections = new Map<Socket, ServerResponse | undefined>()
  app.server.on('connection', (socket: Socket) => {
    connections.set(socket, undefined)
    socket.once('close', () => connections.delete(socket))
  })
  app.server.on('request', (request: IncomingMessage, answer: ServerResponse) => {
    connections.set(request.socket, answer)
  })
  app.addHook('preClose', async () => {
    closing = true
    for (const [socket, last] of connections) {
      // A request not fully arrived reached no handler: closing loses nothing. Ended first,
      // so that the last answer's bytes still go out.
      if (last === undefined || last.writableFinished) socket.end(() => socket.destroy())
      // Told, the client sends its next request elsewhere; kept alive, it would hold the close.
      else if (!last.headersSent) last.setHeader('connection', 'close')
    }
  })
  app.addHook('onRequest', (_request, reply, done) => {
    if (closing) return done(withHeaders(new ShuttingDown(), { connection: 'close' }))
    if (draining) reply.header('connection', 'close')
    done()
  })
}

export default fp(refuseWhileClosing, { name: 'closing', fastify: '5.x', dependencies: ['readiness'] })
