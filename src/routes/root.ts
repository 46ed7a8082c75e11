import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { DOCS_PREFIX } from '../plugins/docs.ts'

/**
 * GET /: a person who opens the service's address lands on its documentation. Public,
 * like the docs, and left out of the OpenAPI document: it is no part of the API.
 */
async function root (app: FastifyInstance): Promise<void> {
  app.get('/', { schema: { hide: true }, config: { quietLog: true } }, async (_request, reply) => await reply.redirect(DOCS_PREFIX, 302))
}

export default fp(root, { name: 'root-route', fastify: '5.x', encapsulate: true })
