import type { FastifyInstance } from 'fastify'
import type { DatabaseConfig } from '../config.js'
import { openStore } from '../store/open.js'
import { instrumented } from './instrumented-store.js'
import { plantRoutes } from './routes.js'

export interface PlantsOptions {
  database: DatabaseConfig
  maxBatch: number
  maxQueueBytes: number
}

/**
 * The plants module: an encapsulated plugin that opens its store, serves it, reports
 * whether it answers, and closes it with the app (after in-flight writes are answered).
 */
export default async function plants (app: FastifyInstance, { database, maxBatch, maxQueueBytes }: PlantsOptions): Promise<void> {
  const store = instrumented(await openStore(database, {
    log: app.log,
    maxBatch,
    maxQueueBytes,
    onBatch: (size) => app.metrics.commitBatches.observe(size)
  }), app.metrics)
  app.addReadinessCheck('store', async () => await store.ping())
  app.addHook('onClose', async () => await store.close())
  await app.register(plantRoutes, { store })
}
