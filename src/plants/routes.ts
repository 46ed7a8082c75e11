import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { PlantListQuery } from '../../schemas/index.js'
import { PlantConflict, PlantNotFound } from '../http/errors.js'
import { entityTag, notModified } from '../http/etag.js'
import type { PlantStore, StoredPlant } from '../store/store.js'
import { addPlant, deletePlant, getPlant, listPlants, PAGE_BYTE_BUDGET } from './route-schemas.js'

export interface PlantRoutesOptions {
  store: PlantStore
}

const DEFAULT_LIMIT: number = PlantListQuery.properties.limit.default
// The JSON around a plant's name and tag: braces, keys, quotes and a 20-digit id.
const PLANT_JSON_OVERHEAD = 48
// A plant may be kept by its client (never by a shared cache: the answer is the token's)
// and used again once its ETag is confirmed by a 304. no-store would leave a browser
// nothing to revalidate.
const REVALIDATE = 'private, no-cache'

/** The plant routes: validation has made every id a bigint, so handlers only call the store. */
const plantRoutes: FastifyPluginAsyncTypebox<PlantRoutesOptions> = async (app, { store }) => {
  app.post('/plants', { schema: addPlant, config: { scope: 'plants:write' } }, async (request) => {
    const { id, name, tag } = request.body // only these: unknown fields are never kept
    const { outcome, plant } = await store.create(tag === undefined ? { id, name } : { id, name, tag })
    if (outcome === 'conflict') throw new PlantConflict(String(id))
    return plant
  })

  app.get('/plants', { schema: listPlants, config: { scope: 'plants:read' } }, async (request, reply) => {
    const { limit = DEFAULT_LIMIT, after, tag } = request.query
    // One more than asked tells whether another page exists without counting the store.
    const page = await store.list({ limit: limit + 1, after, tag })
    const end = withinBudget(page, Math.min(limit, page.length))
    if (end < page.length) {
      page.length = end
      reply.header('link', nextPageLink(limit, page[end - 1], tag))
    }
    return page
  })

  app.get('/plants/:id', { schema: getPlant, config: { scope: 'plants:read' } }, async (request, reply) => {
    const plant = await store.get(request.params.id)
    if (plant === undefined) throw new PlantNotFound(String(request.params.id))
    const etag = entityTag(JSON.stringify([String(plant.id), plant.name, plant.tag ?? null]))
    reply.header('etag', etag).header('cache-control', REVALIDATE)
    if (notModified(request.headers['if-none-match'], etag)) return await reply.code(304).send()
    return plant
  })

  app.delete('/plants/:id', { schema: deletePlant, config: { scope: 'plants:write' } }, async (request, reply) => {
    if (!await store.delete(request.params.id)) throw new PlantNotFound(String(request.params.id))
    return await reply.code(204).send(null)
  })
}

export default plantRoutes

/** How many of the first `count` plants fit the page's byte budget; always at least one. */
function withinBudget (plants: StoredPlant[], count: number): number {
  // A UTF-16 code unit takes at most 3 bytes in UTF-8, so a page far below the budget,
  // as nearly all are, needs no byte counted: counting was about 2% of a page's time.
  let most = 0
  for (let i = 0; i < count; i++) {
    const { name, tag } = plants[i]
    most += PLANT_JSON_OVERHEAD + 3 * (name.length + (tag === undefined ? 0 : tag.length))
  }
  if (most <= PAGE_BYTE_BUDGET) return count
  let bytes = 0
  for (let i = 0; i < count; i++) {
    const { name, tag } = plants[i]
    bytes += PLANT_JSON_OVERHEAD + Buffer.byteLength(name) + (tag === undefined ? 0 : Buffer.byteLength(tag))
    if (bytes > PAGE_BYTE_BUDGET && i > 0) return i
  }
  return count
}

function nextPageLink (limit: number, last: StoredPlant, tag: string | undefined): string {
  const query = new URLSearchParams({ limit: String(limit), after: String(last.id) })
  if (tag !== undefined) query.set('tag', tag)
  return `</plants?${query}>; rel="next"`
}
