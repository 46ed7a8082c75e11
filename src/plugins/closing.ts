import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ShuttingDown, withHeaders } from '../http/errors.js'

/**
 * Once the app starts closing, requests still arriving on open connections are
 * answered 503 in the Error shape (Fastify's own 503 has its default body) with
 * `Connection: close`, while those already in flight finish. A plugin with
 * fastify-plugin because the hook must guard every route.
 */
async function refuseWhileClosing (app: FastifyInstance): Promise<void> {
  let closing = false
  app.addHook('preClose', async () => { closing = true })
  app.addHook('onRequest', (_request, _reply, done) => {
    if (!closing) return done()
    done(withHeaders(new ShuttingDown(), { connection: 'close' }))
  })
}

export default fp(refuseWhileClosing, { name: 'closing', fastify: '5.x' })
