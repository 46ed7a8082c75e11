import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { errorResponses, Health, ref } from '../schemas/index.js'
import { NotReady } from './http-errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Adds a check that GET /health/ready runs; a rejection or a slow answer means not ready. */
    addReadinessCheck: (name: string, check: () => Promise<void>) => void
  }
}

const READY_TIMEOUT_MS = 1000

/**
 * GET /health (liveness: the process answers) and GET /health/ready (readiness: every
 * registered check answers within a second). Public, as load balancers call them.
 * A plugin with fastify-plugin so that plugins registered later can add their checks.
 */
async function health (app: FastifyInstance): Promise<void> {
  const checks = new Map<string, () => Promise<void>>()
  app.decorate('addReadinessCheck', (name: string, check: () => Promise<void>) => { checks.set(name, check) })

  app.get('/health', {
    schema: {
      operationId: 'liveness',
      summary: 'Liveness: the process answers',
      description: 'Touches no store. Needs no token.',
      tags: ['health'],
      security: [],
      response: { 200: ref(Health, { description: 'Alive' }), ...errorResponses([503, 'Shutting down']) }
    }
  }, async () => ({ status: 'ok' }))

  app.get('/health/ready', {
    schema: {
      operationId: 'readiness',
      summary: 'Readiness: the service and its store answer',
      description: `Answers 503 when the store does not answer within ${READY_TIMEOUT_MS} ms, or while the service shuts down. Needs no token.`,
      tags: ['health'],
      security: [],
      response: {
        200: ref(Health, { description: 'Ready to serve' }),
        ...errorResponses([503, 'Not ready: the store does not answer, or the service is shutting down'])
      }
    }
  }, async (request) => {
    for (const [name, check] of checks) {
      try {
        await withTimeout(check(), READY_TIMEOUT_MS)
      } catch (err) {
        // The cause (a driver's message, a host name) is for the operator, not for
        // whoever asks this public route.
        request.log.warn({ err, check: name }, 'not ready')
        throw new NotReady(`the ${name} is unavailable`)
      }
    }
    return { status: 'ready' }
  })
}

async function withTimeout (work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  try {
    await Promise.race([work, timeout])
  } finally {
    clearTimeout(timer)
  }
}

export default fp(health, { name: 'health' })
