import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

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
 * Answers leave in order all the same, as HTTP/1.1 has it.
 *
 * A connection on which nothing moves for SEND_TIMEOUT_MS is closed by Node (Fastify's
 * connectionTimeout); the requests still waiting on it go with it, never handled. Its
 * answer was never finished, so the request log has no line for it: this says why.
 *
 * A plugin with fastify-plugin so that the hooks guard every route, the 404 included.
 */
async function unreadAnswers (app: FastifyInstance, { sendTimeoutMs }: UnreadAnswersOptions): Promise<void> {
  app.addHook('onRequest', (_request, reply, done) => {
    // Node gives an answer its connection once the answers before it are written out.
    if (reply.raw.socket !== null) done()
    else reply.raw.once('socket', () => { done() })
  })
  app.addHook('onTimeout', (request, _reply, done) => {
    request.log.info({ client: request.ip, sendTimeoutMs }, `connection closed: nothing moved on it for ${sendTimeoutMs} ms while a request was handled or answered (a client that does not read its answer?)`)
    done()
  })
}

export default fp(unreadAnswers, { name: 'unread-answers', fastify: '5.x' })
