import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { openStore, type DatabaseConfig } from '../store/open.ts'
import webhooks, { type WebhooksOptions } from '../webhooks/plugin.ts'
import { instrumented } from './instrumented-store.ts'
import plantRoutes from './routes.ts'

export interface PlantsOptions {
  database: DatabaseConfig
  maxBatch: number
  maxQueueBytes: number
  webhooks: Omit<WebhooksOptions, 'store'>
}

/**
 * The plants module: an encapsulated plugin that opens its store, serves it, reports
 * whether it answers, and closes it with the app (after in-flight writes are answered).
 * New plants are announced by the webhooks module, which it gives the same store: the
 * webhooks close first, so their last attempts are still recorded.
 * Wrapped with fastify-plugin only to declare what it needs of the app (`encapsulate`
 * keeps its routes and hooks its own).
 */
async function plants (app: FastifyInstance, { database, maxBatch, maxQueueBytes, webhooks: webhookOptions }: PlantsOptions): Promise<void> {
  const store = instrumented(await openStore(database, {
    log: app.log,
    maxBatch,
    maxQueueBytes,
    onBatch: (size) => app.metrics.commitBatches.observe(size)
  }), app.metrics)
  app.readiness.add('store', async () => await store.ping())
  app.addHook('onClose', async () => await store.close())
  await app.register(plantRoutes, { store })
  await app.register(webhooks, { ...webhookOptions, store: store.webhooks })
}

export default fp(plants, { name: 'plants', fastify: '5.x', dependencies: ['metrics', 'readiness', 'auth'], encapsulate: true })
