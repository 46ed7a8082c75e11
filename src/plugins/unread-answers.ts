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
 * A client that does not read its answers holds one at a time: a pipelined request waits
 * until the answers before it are written out (Node would handle them all and hold every
 * answer), at most MAX_WAITING per connection. A connection idle SEND_TIMEOUT_MS is logged.
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
    // Node stops reading only once answers fill the socket's buffer, which waiting ones never do.
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
