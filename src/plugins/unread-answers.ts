import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

// Requests one connection may have waiting behind an answer still being written out; past
// them, the connection is closed. Browsers do not pipeline; a client that does reads as
// it goes.
const MAX_WAITING = 64

export interface UnreadAnswersOptions {
  /** Fastify's connectionTimeout: how long nothing may move on a connection while a request is handled or answered. */
  sendTimeoutMs: number
}

/**
 * A client that does not read its answers holds one of them at a time, and not for long.
 *
 * A request pipelined behind an answer still being written out waits for it. Node
 * handles at once every request a client pipelines in one packet, and holds each answer
 * until the client has read those before it: a client that sent a hundred page requests
 * and read nothing had the service hold a hundred pages (470 MB of resident memory).
 * Answers leave in order all the same, as HTTP/1.1 has it. At most MAX_WAITING wait on a
 * connection.
 *
 * A connection on which nothing moves for SEND_TIMEOUT_MS is closed by Node (Fastify's
 * connectionTimeout); the requests still waiting on it go with it, never handled. Its
 * answer was never finished, so the request log has no line for it: this says why.
 *
 * A plugin with fastify-plugin so that the hooks guard every route, the 404 included.
 */
async function unreadAnswers (app: FastifyInstance, { sendTimeoutMs }: UnreadAnswersOptions): Promise<void> {
  // Requests waiting on each connection for the answers before theirs.
  const waiting = new WeakMap<Socket, number>()
  app.addHook('onRequest', (request, reply, done) => {
    // Node gives an answer its connection once the answers before it are written out.
    if (reply.raw.socket !== null) {
      done()
      return
    }
    const socket = request.raw.socket
    const count = (waiting.get(socket) ?? 0) + 1
    waiting.set(socket, count)
    // Node stops reading a connection only once its answers fill the socket's buffer,
    // which answers waiting their turn never do: one connection pipelining health checks
    // without reading had 400,000 of them wait, 2 GB of heap, and closing it held the
    // event loop for minutes while Node let them go one by one.
    if (count > MAX_WAITING) {
      // Those that came in the same packet after it come here too: logged once.
      if (count === MAX_WAITING + 1) request.log.info({ client: request.ip }, `connection closed: more than ${MAX_WAITING} requests pipelined behind answers it did not read`)
      socket.destroy()
      return
    }
    reply.raw.once('socket', () => {
      waiting.set(socket, (waiting.get(socket) ?? 1) - 1)
      done()
    })
  })
  app.addHook('onTimeout', (request, _reply, done) => {
    request.log.info({ client: request.ip, sendTimeoutMs }, `connection closed: nothing moved on it for ${sendTimeoutMs} ms while a request was handled or answered (a client that does not read its answer?)`)
    done()
  })
}

export default fp(unreadAnswers, { name: 'unread-answers', fastify: '5.x' })
