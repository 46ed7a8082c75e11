import { type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { errorResponses, Health, ref } from '../../schemas/index.ts'
import { READY_TIMEOUT_MS } from '../plugins/readiness.ts'

const liveness = {
  operationId: 'liveness',
  summary: 'Liveness: the process answers',
  description: 'Touches no store. Needs no token.',
  tags: ['health'],
  security: [],
  response: { 200: ref(Health, { description: 'Alive' }), ...errorResponses('shutting_down') }
}

const readinessSchema = {
  operationId: 'readiness',
  summary: 'Readiness: the service and its store answer',
  description: `Answers 503 when the store does not answer within ${READY_TIMEOUT_MS} ms, or while the service shuts down. Needs no token.`,
  tags: ['health'],
  security: [],
  response: {
    200: ref(Health, { description: 'Ready to serve' }),
    ...errorResponses('not_ready', 'shutting_down')
  }
}

/** GET /health and GET /health/ready: public, as load balancers call them. */
const health: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/health', { schema: liveness, config: { quietLog: true } }, async () => ({ status: 'ok' }))

  app.get('/health/ready', { schema: readinessSchema, config: { quietLog: true } }, async (request) => {
    await app.readiness.check(request.log)
    return { status: 'ready' }
  })
}

export default fp(health, { name: 'health-routes', fastify: '5.x', dependencies: ['readiness'], encapsulate: true })
