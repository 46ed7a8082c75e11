import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { openStore, type DatabaseConfig } from '../store/open.ts'
import webhooks, { type WebhooksOptions } from '../webhooks/plugin.ts'
import changeRoutes from './change-routes.ts'
import { instrumented } from './instrumented-store.ts'
import { PageTurns } from './page-turns.ts'
import type { ReaderLimits } from './reader-slots.ts'
import plantRoutes from './routes.ts'

export interface PlantsOptions {
  database: DatabaseConfig
  maxBatch: number
  maxQueueBytes: number
  changes: ReaderLimits
  webhooks: Omit<WebhooksOptions, 'store' | 'commits'>
}

/**
 * The plants module: opens its store, serves it, and closes it with the app. The webhooks
 * module shares the store and closes first, so its last attempts are still recorded.
 */
async function plants (app: FastifyInstance, { database, maxBatch, maxQueueBytes, changes, webhooks: webhookOptions }: PlantsOptions): Promise<void> {
  const store = instrumented(await openStore(database, {
    log: app.log,
    maxBatch,
    maxQueueBytes,
    onBatch: (size) => app.metrics.commitBatches.observe(size)
  }), app.metrics)
  app.readiness.add('store', async () => await store.ping())
  app.addHook('onClose', async () => await store.close())
  // One budget of page bytes a turn for plant pages and the change feed's alike.
  const turns = new PageTurns()
  await app.register(plantRoutes, { store, turns })
  await app.register(changeRoutes, { store, limits: changes, turns })
  await app.register(webhooks, { ...webhookOptions, store: store.webhooks, commits: store.commits })
}

export default fp(plants, { name: 'plants', fastify: '5.x', dependencies: ['metrics', 'readiness', 'auth'], encapsulate: true })
