import type { FastifyInstance } from 'fastify'
import { openStore } from '../store/open.js'
import { plantRoutes } from './routes.js'

export interface PlantsOptions {
  databaseUrl: string
}

/** The plants module: an encapsulated plugin that opens its store, serves it, and closes it with the app. */
export default async function plants (app: FastifyInstance, { databaseUrl }: PlantsOptions): Promise<void> {
  const store = await openStore(databaseUrl)
  app.addHook('onClose', async () => await store.close())
  await app.register(plantRoutes, { store })
}
