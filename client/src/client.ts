import type { Client, ClientOptions } from 'openapi-fetch'
import { orThrow } from './errors.ts'
import { exactClient } from './exact.ts'
import { assertExactJson } from './json.ts'
import { nextLink } from './links.ts'
import type { components, paths } from './schema.ts'
import { subscriber, type CreatedSubscription, type NewSubscription, type SubscribeOptions } from './subscribe.ts'

/** A plant as the store holds it, with its id. */
export type StoredPlant = components['schemas']['StoredPlant']
/** A plant's name and tag: what a create answers. */
export type Plant = components['schemas']['Plant']
export type NewPlant = components['schemas']['NewPlant']
/** A plant's new name and tag. */
export type PlantUpdate = components['schemas']['PlantUpdate']
/** One event of the change feed. */
export type Change = components['schemas']['Change']
type ChangePage = components['schemas']['ChangePage']

export interface ChangesOptions {
  /** Resume after this cursor (a Change's `seq`); from the oldest event kept when left out. */
  after?: number
  /** Events per page. */
  limit?: number
  /** Keep waiting for new events, long polls of `wait` seconds each (30 by default), until `signal`; false: stop once caught up. */
  follow?: boolean
  wait?: number
  signal?: AbortSignal
}
/** The filters of GET /plants: `tag`, and `limit` for the size of each page fetched. */
export type PlantsQuery = Omit<NonNullable<paths['/plants']['get']['parameters']['query']>, 'after'>

export interface PlantStoreClientOptions {
  /** Where the service answers, e.g. http://127.0.0.1:3000 */
  baseUrl: string
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string
  /** Another fetch (a test's, one with a proxy agent); the global one by default. */
  fetch?: ClientOptions['fetch']
  headers?: Record<string, string>
}

export interface PlantStoreClient {
  /** Every operation of openapi.yaml, typed, ids exact: openapi-fetch's `{ data, error, response }`. */
  api: Client<paths>
  /** Every plant, a page at a time, following each page's `Link: <…>; rel="next"`. */
  plants: (query?: PlantsQuery) => AsyncGenerator<StoredPlant, void, undefined>
  getPlant: (id: bigint) => Promise<StoredPlant>
  createPlant: (plant: NewPlant) => Promise<Plant>
  /** Replaces a plant's name and tag; with `ifMatch` (an ETag read before), only if it is still that plant (else a 412 precondition_failed). */
  updatePlant: (id: bigint, plant: PlantUpdate, ifMatch?: string) => Promise<StoredPlant>
  /** Deletes a plant; with `ifMatch` (an ETag read before), only if it is still that plant (else a 412 precondition_failed). */
  deletePlant: (id: bigint, ifMatch?: string) => Promise<void>
  /** Every event of the change feed after `after`, in commit order, each once: save a Change's `seq` to resume after it. */
  changes: (options?: ChangesOptions) => AsyncGenerator<Change, void, undefined>
  /** Subscribes a webhook, under an Idempotency-Key: tried again, it subscribes once, and answers the same secret. */
  subscribe: (subscription: NewSubscription, options?: SubscribeOptions) => Promise<CreatedSubscription>
}

/** The Plant Store client: the operations throw a PlantStoreError when the answer is not a success. */
export function createPlantStoreClient ({ baseUrl, token, fetch, headers = {} }: PlantStoreClientOptions): PlantStoreClient {
  assertExactJson()
  const authorization: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` }
  const api = exactClient<paths>({ baseUrl, fetch, headers: { ...headers, ...authorization } })
  return {
    api,
    async * plants (query = {}) {
      let params: PlantsQuery = query
      while (true) {
        const result = await api.GET('/plants', { params: { query: params } })
        yield * orThrow(result)
        const next = nextLink(result.response.headers.get('link'))
        if (next === undefined) return
        // The next page is the one the service links to, its parameters as it wrote them.
        params = Object.fromEntries(new URL(next, 'http://link.invalid').searchParams) as PlantsQuery
      }
    },
    getPlant: async (id) => orThrow(await api.GET('/plants/{id}', { params: { path: { id } } })),
    createPlant: async (plant) => orThrow(await api.POST('/plants', { body: plant })),
    updatePlant: async (id, plant, ifMatch) => orThrow(await api.PUT('/plants/{id}', {
      params: { path: { id }, header: ifMatch === undefined ? undefined : { 'If-Match': ifMatch } }, body: plant
    })),
    deletePlant: async (id, ifMatch) => {
      orThrow(await api.DELETE('/plants/{id}', { params: { path: { id }, header: ifMatch === undefined ? undefined : { 'If-Match': ifMatch } } }))
    },
    async * changes ({ after, limit, follow = true, wait = 30, signal } = {}) {
      for (let cursor = after; signal?.aborted !== true;) {
        const query = { after: cursor, limit, wait: follow ? wait : 0 }
        // JSON: the stream is the answer to Accept: text/event-stream only.
        const page = orThrow(await api.GET('/plants/changes', { params: { query }, signal })) as ChangePage
        yield * page.changes
        cursor = page.next
        if (!follow && page.changes.length === 0) return
      }
    },
    subscribe: subscriber(api)
  }
}
