import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { setAnswerHeaders } from '../http/answer-headers.ts'

/**
 * Every answer carries its request id and the security headers, errors included: set
 * first thing, so whatever answers later (a 404, a 401, a crash) has them. A plugin
 * with fastify-plugin because the hook must reach every route of the app.
 */
async function answerHeaders (app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', (request, reply, done) => {
    setAnswerHeaders(request, reply)
    done()
  })
}

export default fp(answerHeaders, { name: 'answer-headers', fastify: '5.x' })
