import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { openStore } from '../store/open.ts'
import webhooks from '../webhooks/plugin.ts'
import type { Resolve } from '../webhooks/resolver.ts'
import changeRoutes from './change-routes.ts'
import { instrumented } from './instrumented-store.ts'
import { PageTurns } from './page-turns.ts'
import plantRoutes from './routes.ts'

export interface PlantsOptions {
  /** How the webhooks module resolves host names; the system's resolver unless a test gives its own. */
  resolve?: Resolve
}

/**
 * The plants module: opens its store, serves it, and closes it with the app. The webhooks
 * module shares the store and closes first, so its last attempts are still recorded.
 */
async function plants (app: FastifyInstance, { resolve }: PlantsOptions): Promise<void> {
  const { config } = app
  const store = instrumented(await openStore(config.database, {
    log: app.log,
    maxBatch: config.GROUP_COMMIT_MAX_BATCH,
    maxQueueBytes: config.WRITE_QUEUE_LIMIT_BYTES,
    onBatch: (size) => app.metrics.commitBatches.observe(size)
  }), app.metrics)
  app.readiness.add('store', async () => await store.ping())
  app.addHook('onClose', async () => await store.close())
  // One budget of page bytes a turn for plant pages and the change feed's alike.
  const turns = new PageTurns()
  await app.register(plantRoutes, { store, turns })
  const limits = { maxReaders: config.CHANGES_MAX_READERS, maxReadersPerToken: config.CHANGES_MAX_READERS_PER_TOKEN }
  await app.register(changeRoutes, { store, limits, turns })
  await app.register(webhooks, { store: store.webhooks, commits: store.commits, resolve })
}

export default fp(plants, { name: 'plants', fastify: '5.x', decorators: { fastify: ['config'] }, dependencies: ['metrics', 'readiness', 'auth'], encapsulate: true })
