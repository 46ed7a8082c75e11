import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ShuttingDown, withHeaders } from '../http/errors.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Starts the delay before closing (SHUTDOWN_DELAY_MS): readiness answers 503 so that
     * a load balancer stops sending new clients, while the requests still sent are served,
     * each answer with `Connection: close`, so that clients reconnect, elsewhere.
     */
    drain: () => void
  }
}

/**
 * Once the app starts closing, the requests in flight finish and each connection goes as
 * soon as it carries none: one with nothing in flight is closed at once, and the last
 * answer in flight on the others says `Connection: close`. A request still arriving on
 * one is never handled: it is answered 503 in the Error shape (Fastify's own 503 has its
 * default body) with `Connection: close`, unless the answer before it closes the
 * connection first. A plugin with fastify-plugin because the hook must guard every route.
 */
async function refuseWhileClosing (app: FastifyInstance): Promise<void> {
  let closing = false
  let draining = false
  app.decorate('drain', () => {
    draining = true
    app.readiness.stop()
  })
  // Node's server.close() closes only the connections between two requests, and stops
  // the header and request deadlines: one that has sent nothing (a browser's pre-connect,
  // a load balancer's spare) or part of a request would hold the close for all of
  // SHUTDOWN_GRACE_MS. Fastify's forceCloseConnections closes Node's idle ones or all.
  // So each connection is kept here with the last answer begun on it: a connection's
  // answers go out in turn, so once that one is finished, none is under way there.
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
      // Nothing of a request that has not fully arrived reached a handler, so closing
      // its connection loses nothing; its client may send it again, elsewhere. An answer
      // instead would be unsolicited on a silent connection, and on a half-sent request
      // could be lost in the reset that closing a connection still receiving causes.
      // Ended first: the last answer's bytes still on their way go out before it closes.
      if (last === undefined || last.writableFinished) socket.end(() => socket.destroy())
      // Told, the client sends its next request on another connection; Node ends this one
      // once the answer is out (an earlier answer closing it would lose those after it).
      // Kept alive, it would hold the close until KEEP_ALIVE_TIMEOUT_MS.
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
