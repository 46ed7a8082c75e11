import { Type, type Static } from '@sinclair/typebox'
import { Int64 } from './int64.ts'
import { NewPlant, Plant } from './plant.ts'
import { ref } from './ref.ts'
import { EVENT_RETENTION_DAYS, EventTypeSchema, PLANT_CREATED, PLANT_DELETED, PLANT_UPDATED } from './webhook.ts'

// The bodies of the plant events, the same for a webhook and in the change feed.

const plantId = Int64({ description: 'The plant\'s id, an exact int64' })

export const PlantUpdated = Type.Object({
  type: Type.Literal(PLANT_UPDATED),
  id: plantId,
  old: ref(Plant, { description: 'The plant before the update' }),
  new: ref(Plant, { description: 'The plant after it' })
}, {
  $id: 'PlantUpdated',
  description: 'A plant.updated event: the plant before and after an update that changed it.',
  examples: [{ type: PLANT_UPDATED, id: 1, old: { name: 'Monstera', tag: 'tropical' }, new: { name: 'Monstera deliciosa', tag: 'tropical' } }]
})

export const PlantDeleted = Type.Object({
  type: Type.Literal(PLANT_DELETED),
  id: plantId,
  name: Type.String({ description: 'The name it had' }),
  tag: Type.Optional(Type.String({ description: 'The tag it had, if any' }))
}, {
  $id: 'PlantDeleted',
  description: 'A plant.deleted event: the id, name and tag of the plant deleted.',
  examples: [{ type: PLANT_DELETED, id: 1, name: 'Monstera', tag: 'tropical' }]
})

/** How long one Server-Sent Events stream lasts; the client's EventSource reconnects with Last-Event-ID. */
export const STREAM_SECONDS = 300
/** A comment line this often keeps a quiet stream's connection and its proxies alive. */
export const HEARTBEAT_SECONDS = 15
/** The longest `wait` a long poll may ask for, in seconds. */
export const CHANGES_MAX_WAIT_SECONDS = 30
/** The most events one page, or one read of a stream, holds. */
export const CHANGES_MAX_LIMIT = 1000

const seq = (description: string, example = 42) => Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description, examples: [example] })

export const Change = Type.Object({
  seq: seq('The event\'s place in the feed, ascending in the order the changes committed: the cursor to resume after, and its Server-Sent Events `id`'),
  type: EventTypeSchema,
  at: Type.String({ format: 'date-time', description: 'When the change committed' }),
  id: Int64({ description: 'The id of the plant that changed, an exact int64' }),
  data: Type.Optional(Type.Union([ref(NewPlant), ref(PlantUpdated), ref(PlantDeleted)], {
    description: 'The event\'s body, byte for byte what a webhook subscription to it is sent: the NewPlant for plant.created, a PlantUpdated or a PlantDeleted. Absent when erased.'
  })),
  erased: Type.Optional(Type.Literal(true, {
    description: 'Present when the plant was deleted since: the data of its earlier events is erased with it, and its plant.deleted event follows in the feed'
  }))
}, {
  $id: 'Change',
  description: 'One event of the change feed: a plant created, updated or deleted.',
  examples: [{ seq: 42, type: PLANT_CREATED, at: '2026-11-28T09:14:03.512Z', id: 1, data: { id: 1, name: 'Monstera', tag: 'tropical' } }]
})

export const ChangePage = Type.Object({
  changes: Type.Array(ref(Change), { description: 'The events after the cursor, in commit order' }),
  next: seq('The cursor to pass as `after` next: the last event\'s seq, or the cursor given when there was none'),
  latest: seq('The newest event\'s seq when the page was read: to follow only what happens from now on, start after it')
}, {
  $id: 'ChangePage',
  description: 'A page of the change feed.',
  examples: [{ changes: Change.examples, next: 42, latest: 57 }]
})

export const ChangesQuery = Type.Object({
  after: Type.Optional(seq(`Only events after this cursor (a \`seq\`, or a page's \`next\`); from the oldest kept (at least ${EVENT_RETENTION_DAYS} days) when left out. \`Last-Event-ID\` takes its place for a stream.`, 0)),
  limit: Type.Optional(Type.Integer({
    format: 'int32', minimum: 1, maximum: CHANGES_MAX_LIMIT, default: 100, description: 'At most this many events', examples: [100]
  })),
  wait: Type.Optional(Type.Integer({
    format: 'int32',
    minimum: 0,
    maximum: CHANGES_MAX_WAIT_SECONDS,
    default: 0,
    description: `When no event follows the cursor: wait up to this many seconds for one (a long poll) before answering an empty page. At most ${CHANGES_MAX_WAIT_SECONDS}.`,
    examples: [0]
  }))
}, { additionalProperties: false })

export type Change = Static<typeof Change>
export type ChangePage = Static<typeof ChangePage>
