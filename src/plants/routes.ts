import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { PlantListQuery } from '../../schemas/index.ts'
import { CollectionPreconditionFailed, PlantConflict, PlantNotFound, PreconditionFailed } from '../http/errors.ts'
import { entityTag, notModified, writePrecondition } from '../http/etag.ts'
import type { PlantStore, Precondition, StoredPlant } from '../store/store.ts'
import type { PageTurns } from './page-turns.ts'
import { addPlant, deletePlant, getPlant, listPlants, PAGE_BYTE_BUDGET, updatePlant } from './route-schemas.ts'

export interface PlantRoutesOptions {
  store: PlantStore
  /** The turns of the event loop large pages take, shared with the change feed. */
  turns: PageTurns
}

const DEFAULT_LIMIT: number = PlantListQuery.properties.limit.default
// The JSON around a plant's name and tag: braces, keys, quotes and a 20-digit id.
const PLANT_JSON_OVERHEAD = 48
// The answer is the token's (never a shared cache's); no-store would leave a browser nothing to revalidate.
const REVALIDATE = 'private, no-cache'

/** The plant routes: validation has made every id a bigint, so handlers only call the store. */
const plantRoutes: FastifyPluginAsyncTypebox<PlantRoutesOptions> = async (app, { store, turns }) => {
  app.post('/plants', { schema: addPlant, config: { scope: 'plants:write' } }, async (request) => {
    // The target is the collection, which always exists and has no ETag.
    if (writePrecondition(request.headers)?.(undefined) === false) throw new CollectionPreconditionFailed()
    const { id, name, tag } = request.body // only these: unknown fields are never kept
    const { outcome, plant } = await store.create(tag === undefined ? { id, name } : { id, name, tag })
    if (outcome === 'conflict') throw new PlantConflict(String(id))
    return plant
  })

  app.get('/plants', { schema: listPlants, config: { scope: 'plants:read' } }, async (request, reply) => {
    const { limit = DEFAULT_LIMIT, after, tag } = request.query
    return await turns.take(async () => {
      // One more than asked tells whether another page exists without counting the store.
      const page = await store.list({ limit: limit + 1, after, tag })
      const { end, bytes } = withinBudget(page, Math.min(limit, page.length))
      if (end < page.length) {
        page.length = end
        reply.header('link', nextPageLink(limit, page[end - 1], tag))
      }
      return { page, bytes }
    })
  })

  app.get('/plants/:id', { schema: getPlant, config: { scope: 'plants:read' } }, async (request, reply) => {
    const plant = await store.get(request.params.id)
    if (plant === undefined) throw new PlantNotFound(String(request.params.id))
    const etag = plantTag(plant)
    reply.header('etag', etag).header('cache-control', REVALIDATE)
    if (notModified(request.headers['if-none-match'], etag)) return await reply.code(304).send()
    return plant
  })

  app.put('/plants/:id', { schema: updatePlant, config: { scope: 'plants:write' } }, async (request, reply) => {
    const { id } = request.params
    const { name, tag } = request.body // only these: an id in the body is ignored like any unknown field
    const { outcome, plant } = await store.update(id, tag === undefined ? { name } : { name, tag }, plantPrecondition(request.headers))
    if (outcome === 'absent') throw new PlantNotFound(String(id))
    if (outcome === 'stale') throw new PreconditionFailed(String(id))
    reply.header('etag', plantTag(plant!))
    return plant
  })

  app.delete('/plants/:id', { schema: deletePlant, config: { scope: 'plants:write' } }, async (request, reply) => {
    const { id } = request.params
    const outcome = await store.delete(id, plantPrecondition(request.headers))
    if (outcome === 'absent') throw new PlantNotFound(String(id))
    if (outcome === 'stale') throw new PreconditionFailed(String(id))
    return await reply.code(204).send(null)
  })
}

export default plantRoutes

/** A write's If-Match and If-None-Match, decided by the store in the transaction that writes, against the plant as stored then. */
function plantPrecondition (headers: IncomingHttpHeaders): Precondition | undefined {
  const precondition = writePrecondition(headers)
  return precondition === undefined ? undefined : (current) => precondition(plantTag(current))
}

/** The plant's strong ETag: a digest of its id, name and tag, the same for a read and an update. */
function plantTag (plant: StoredPlant): string {
  return entityTag(JSON.stringify([String(plant.id), plant.name, plant.tag ?? null]))
}

/** How many of the first `count` plants fit the page's byte budget (at least one), and about how many bytes they make. */
function withinBudget (plants: StoredPlant[], count: number): { end: number, bytes: number } {
  // A UTF-16 unit is at most 6 bytes of JSON (\u0001): a page far below the budget needs no exact count.
  let units = 0
  for (let i = 0; i < count; i++) {
    const { name, tag } = plants[i]
    units += PLANT_JSON_OVERHEAD + name.length + (tag === undefined ? 0 : tag.length)
  }
  if (6 * units <= PAGE_BYTE_BUDGET) return { end: count, bytes: units }
  let bytes = 0
  for (let i = 0; i < count; i++) {
    const { name, tag } = plants[i]
    // Counted as JSON writes them (UTF-8 and escapes), not as UTF-8 alone.
    bytes += PLANT_JSON_OVERHEAD + jsonBytes(name) + (tag === undefined ? 0 : jsonBytes(tag))
    if (bytes > PAGE_BYTE_BUDGET && i > 0) return { end: i, bytes }
  }
  return { end: count, bytes }
}

/** The bytes of a string as a JSON string's content. */
function jsonBytes (text: string): number {
  return Buffer.byteLength(JSON.stringify(text)) - 2
}

function nextPageLink (limit: number, last: StoredPlant, tag: string | undefined): string {
  const query = new URLSearchParams({ limit: String(limit), after: String(last.id) })
  if (tag !== undefined) query.set('tag', tag)
  return `</plants?${query}>; rel="next"`
}
