import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import {
  errorResponses, NewPlant, Plant, PlantIdParams, PlantListQuery, ref, StoredPlant
} from '../../schemas/index.js'
import { PlantConflict, PlantNotFound } from '../http-errors.js'
import type { PlantRecord, PlantStore } from '../store/store.js'

export interface PlantRoutesOptions {
  store: PlantStore
}

const DEFAULT_LIMIT: number = PlantListQuery.properties.limit.default
/** A page stops early past this many bytes of plants, so no answer grows past a few MiB. */
export const PAGE_BYTE_BUDGET = 2 * 1024 * 1024
// The JSON around a plant's name and tag: braces, keys, quotes and a 20-digit id.
const PLANT_JSON_OVERHEAD = 48

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
        ...errorResponses(400, 401, 409, 413, 415, 429, 503)
      }
    }
  }, async (request) => {
    const { id, name, tag } = request.body
    const { outcome, plant } = await store.create({ id: BigInt(id), name, ...(tag === undefined ? {} : { tag }) })
    if (outcome === 'conflict') throw new PlantConflict(String(id))
    return plant
  })

  app.get('/plants', {
    schema: {
      operationId: 'listPlants',
      summary: 'List plants',
      description: `Plants in ascending id order, one page at a time: at most \`limit\` plants, and fewer when their names and tags pass about ${PAGE_BYTE_BUDGET / 1024 / 1024} MiB. When more remain, the \`Link\` header holds the next page's address; following it from the first page visits every plant exactly once.`,
      tags: ['plants'],
      querystring: PlantListQuery,
      response: {
        200: Type.Array(ref(StoredPlant), {
          description: 'A page of plants, ascending by id',
          headers: {
            Link: Type.String({
              description: 'RFC 8288 link to the next page, present when more plants remain: `</plants?limit=100&after=42>; rel="next"`'
            })
          }
        }),
        ...errorResponses(400, 401, 429, 503)
      }
    }
  }, async (request, reply) => {
    const { limit = DEFAULT_LIMIT, after, tag } = request.query
    // One more than asked tells whether another page exists without counting the store.
    const page = await store.list({ limit: limit + 1, after: after === undefined ? undefined : BigInt(after), tag })
    const end = withinBudget(page, Math.min(limit, page.length))
    if (end < page.length) {
      page.length = end
      reply.header('link', nextPageLink(limit, page[end - 1], tag))
    }
    return page
  })

  app.get('/plants/:id', {
    schema: {
      operationId: 'getPlant',
      summary: 'Get a plant by id',
      tags: ['plants'],
      params: PlantIdParams,
      response: {
        200: ref(StoredPlant, { description: 'The plant' }),
        ...errorResponses(400, 401, 404, 429, 503)
      }
    }
  }, async (request) => {
    const plant = await store.get(BigInt(request.params.id))
    if (plant === undefined) throw new PlantNotFound(String(request.params.id))
    return plant
  })

  app.delete('/plants/:id', {
    schema: {
      operationId: 'deletePlant',
      summary: 'Delete a plant by id',
      description: 'Deletes the plant; its id can then be created again.',
      tags: ['plants'],
      params: PlantIdParams,
      response: {
        204: Type.Null({ description: 'Deleted' }),
        ...errorResponses(400, 401, 404, 429, 503)
      }
    }
  }, async (request, reply) => {
    if (!await store.delete(BigInt(request.params.id))) throw new PlantNotFound(String(request.params.id))
    return await reply.code(204).send(null)
  })
}

/** How many of the first `count` plants fit the page's byte budget; always at least one. */
function withinBudget (plants: PlantRecord[], count: number): number {
  let bytes = 0
  for (let i = 0; i < count; i++) {
    const { name, tag } = plants[i]
    bytes += PLANT_JSON_OVERHEAD + Buffer.byteLength(name) + (tag === undefined ? 0 : Buffer.byteLength(tag))
    if (bytes > PAGE_BYTE_BUDGET && i > 0) return i
  }
  return count
}

function nextPageLink (limit: number, last: PlantRecord, tag: string | undefined): string {
  const query = new URLSearchParams({ limit: String(limit), after: String(last.id) })
  if (tag !== undefined) query.set('tag', tag)
  return `</plants?${query}>; rel="next"`
}
