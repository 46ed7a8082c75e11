import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { DOCS_PREFIX } from '../plugins/docs.ts'

/** GET / redirects to the docs; public, and hidden from the OpenAPI document. */
async function root (app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true }, config: { quietLog: true } }, async (_request, reply) => await reply.redirect(DOCS_PREFIX, 302))
}

export default fp(root, { name: 'root-route', fastify: '5.x', encapsulate: true })
