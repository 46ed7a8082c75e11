import type { FastifyInstance } from 'fastify'
import type { DatabaseConfig } from '../config.js'
import { openStore } from '../store/open.js'
import { plantRoutes } from './routes.js'

export interface PlantsOptions {
  database: DatabaseConfig
}

/** The plants module: an encapsulated plugin that opens its store, serves it, and closes it with the app. */
export default async function plants (app: FastifyInstance, { database }: PlantsOptions): Promise<void> {
  const store = await openStore(database, app.log)
  app.addHook('onClose', async () => await store.close())
  await app.register(plantRoutes, { store })
}
