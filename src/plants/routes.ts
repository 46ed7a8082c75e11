import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { errorResponses, NewPlant, Plant, ref } from '../../schemas/index.js'
import { PlantConflict } from '../http-errors.js'
import type { PlantStore } from '../store/store.js'

export interface PlantRoutesOptions {
  store: PlantStore
}

export async function plantRoutes (fastify: FastifyInstance, { store }: PlantRoutesOptions): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.post('/plants', {
    schema: {
      operationId: 'addPlant',
      summary: 'Add a plant',
      description: 'Creates a plant in the store. Sending a plant whose id is already stored with the same name and tag is a safe retry and answers 200 again; with a different name or tag it answers 409.',
      tags: ['plants'],
      body: ref(NewPlant),
      response: {
        200: ref(Plant, { description: 'The plant as stored: its name and tag, never its id' }),
        ...errorResponses(400, 401, 409, 413, 415, 500, 503)
      }
    }
  }, async (request) => {
    const { id, name, tag } = request.body
    const { outcome, plant } = await store.create({ id: BigInt(id), name, ...(tag === undefined ? {} : { tag }) })
    if (outcome === 'conflict') throw new PlantConflict(String(id))
    return plant
  })
}
