import { Type } from '@sinclair/typebox'
import { always } from '../../schemas/headers.ts'
import {
  CHANGES_MAX_WAIT_SECONDS, ChangePage, ChangesQuery, errorResponses, EVENT_RETENTION_DAYS, GUARDED, HEARTBEAT_SECONDS, JSON_BODY, NewPlant,
  PATH_PARAMETERS, Plant, PlantIdParams, PlantPreconditions, CollectionPreconditions, PlantListQuery, PlantUpdate, ref, STREAM_SECONDS, StoredPlant
} from '../../schemas/index.ts'

/** A page stops early past this many bytes of plants, so no answer grows past a few MiB. */
export const PAGE_BYTE_BUDGET = 2 * 1024 * 1024

const PRECONDITIONS = ['precondition_failed', 'precondition_unsupported'] as const

export const addPlant = {
  operationId: 'addPlant',
  summary: 'Add a plant',
  description: 'Creates a plant in the store. Sending a plant whose id is already stored with the same name and tag is a safe retry and answers 200 again; with a different name or tag it answers 409.',
  tags: ['plants'],
  body: ref(NewPlant),
  requestHeaders: CollectionPreconditions,
  response: {
    200: ref(Plant, { description: 'The plant as stored: its name and tag, never its id' }),
    ...errorResponses(GUARDED, JSON_BODY, 'plant_rejected', 'plant_conflict', ...PRECONDITIONS, 'store_unavailable', 'store_busy')
  }
}

export const listPlants = {
  operationId: 'listPlants',
  summary: 'List plants',
  description: `Plants in ascending id order, one page at a time: at most \`limit\` plants, and fewer when their names and tags pass about ${PAGE_BYTE_BUDGET / 1024 / 1024} MiB. When more remain, the \`Link\` header holds the next page's address; following it from the first page visits every plant exactly once.`,
  tags: ['plants'],
  querystring: PlantListQuery,
  response: {
    200: Type.Array(ref(StoredPlant), {
      description: 'A page of plants, ascending by id',
      examples: [StoredPlant.examples],
      headers: {
        Link: Type.String({
          description: 'RFC 8288 link to the next page, present when more plants remain: `</plants?limit=100&after=42>; rel="next"`'
        })
      }
    }),
    ...errorResponses(GUARDED, 'invalid_parameter', 'store_unavailable', 'store_busy')
  }
}

// The 200 and the 304 carry the same validators (RFC 9110 section 15.4.5), every one of them.
const plantCaching = {
  ETag: always(Type.String({
    description: 'Strong entity tag of the plant, changing whenever the plant does; send it in `If-None-Match` to revalidate: `"TG-sn9ffrhRIQH8Vnr-vVM"`'
  })),
  'Cache-Control': always(Type.String({ description: '`private, no-cache`: a client may keep the plant, and revalidates it before each use' }))
}

// Read by the handler (src/http/etag.ts), in the document only: one that names no tag is
// no match. The example is the tag of a copy no longer current (the Monstera before its
// tag was set), so that "Try it out", which sends it, gets the plant rather than a 304.
const revalidation = Type.Object({
  'If-None-Match': Type.Optional(Type.String({
    description: 'The `ETag` of the copy the client holds (a list of them, or `*`): while the plant is unchanged, the answer is a 304 without a body',
    examples: ['"bOW8N2NaL5pMvtiOyZ3iGj"']
  }))
})

export const getPlant = {
  operationId: 'getPlant',
  summary: 'Get a plant by id',
  description: 'The answer carries the plant\'s `ETag`; a request whose `If-None-Match` names it (compared weakly), or is `*`, answers 304 without a body while the plant is unchanged.',
  tags: ['plants'],
  params: PlantIdParams,
  requestHeaders: revalidation,
  response: {
    200: ref(StoredPlant, { description: 'The plant', headers: plantCaching }),
    // No body at all: `null` would be a JSON body of its own.
    304: Type.Unsafe<undefined>(Type.Null({ description: 'Not modified: the plant is still the one `If-None-Match` names', headers: plantCaching })),
    ...errorResponses(GUARDED, PATH_PARAMETERS, 'plant_not_found', 'store_unavailable', 'store_busy')
  }
}

export const updatePlant = {
  operationId: 'updatePlant',
  summary: 'Replace a plant\'s name and tag',
  description: 'Replaces the name and tag of the plant with this id (no tag removes it); the id stays. With `If-Match`, only while the plant is still the one read (optimistic concurrency), and with `If-None-Match`, only while it has none of the tags named: else a 412 and nothing written. An update that changes nothing writes and announces nothing, and answers 200 as one that does. Like a create, the 200 is sent once the change is on disk.',
  tags: ['plants'],
  params: PlantIdParams,
  body: ref(PlantUpdate),
  requestHeaders: PlantPreconditions,
  response: {
    200: ref(StoredPlant, { description: 'The plant as stored now, as GET answers it', headers: { ETag: plantCaching.ETag } }),
    ...errorResponses(GUARDED, PATH_PARAMETERS, JSON_BODY, 'plant_rejected', 'plant_not_found', ...PRECONDITIONS, 'store_unavailable', 'store_busy')
  }
}

export const deletePlant = {
  operationId: 'deletePlant',
  summary: 'Delete a plant by id',
  description: 'Deletes the plant; its id can then be created again. With `If-Match`, only while the plant is still the one read: else a 412 and nothing deleted (a stale delete never undoes another client\'s update).',
  tags: ['plants'],
  params: PlantIdParams,
  requestHeaders: PlantPreconditions,
  response: {
    204: Type.Null({ description: 'Deleted' }),
    ...errorResponses(GUARDED, PATH_PARAMETERS, 'plant_not_found', ...PRECONDITIONS, 'store_unavailable', 'store_busy')
  }
}

export const listChanges = {
  operationId: 'listChanges',
  summary: 'Follow every change to the plants',
  description: `The events of every change (\`plant.created\`, \`plant.updated\`, \`plant.deleted\`) in the order they committed, from the same records as webhooks, each with the same body. Page with \`after\` (each page's \`next\`): following it visits every event exactly once, on every instance. A page holds at most \`limit\` events, and stops before it passes ${PAGE_BYTE_BUDGET / 1024 / 1024} MiB. With \`wait\`, an empty page waits up to ${CHANGES_MAX_WAIT_SECONDS} s for an event (a long poll). With \`Accept: text/event-stream\`, the answer is a stream of Server-Sent Events instead: each event's \`id\` is its \`seq\`, \`event\` its type and \`data\` the Change; a comment every ${HEARTBEAT_SECONDS} s keeps it open, and it ends after ${STREAM_SECONDS} s (an EventSource reconnects, and \`Last-Event-ID\` resumes after the last event received). Events are kept at least ${EVENT_RETENTION_DAYS} days: a cursor before those pruned answers 410, and the consumer reads the plants again. Waiting and streaming requests are bounded per token (CHANGES_MAX_READERS_PER_TOKEN) and in all (CHANGES_MAX_READERS).`,
  tags: ['plants'],
  querystring: ChangesQuery,
  headers: Type.Object({
    'last-event-id': Type.Optional(Type.String({
      pattern: '^[0-9]{1,16}$',
      description: 'For a stream: the `id` of the last event received, as an EventSource sends it when it reconnects; it takes the place of `after`, and like it is at most 9007199254740991 (2^53 - 1)',
      examples: ['0']
    }))
  }),
  response: {
    200: {
      description: 'A page of the feed (JSON), or a stream of its events (`text/event-stream`)',
      content: {
        'application/json': { schema: ref(ChangePage) },
        'text/event-stream': {
          schema: Type.String({
            description: 'Server-Sent Events: `id: <seq>`, `event: <type>`, `data: <the Change as JSON>`, then a blank line; comment lines (`:`) between them keep the connection open',
            examples: ['id: 42\nevent: plant.created\ndata: {"seq":42,"type":"plant.created","at":"2026-11-28T09:14:03.512Z","id":1,"data":{"id":1,"name":"Monstera","tag":"tropical"}}\n\n']
          })
        }
      }
    },
    ...errorResponses(GUARDED, 'invalid_parameter', 'cursor_expired', 'too_many_readers', 'store_unavailable', 'store_busy')
  }
}
