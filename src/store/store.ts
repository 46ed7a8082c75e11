import type { FastifyBaseLogger } from 'fastify'
import { INT64_MAX, INT64_MIN, type StoredPlant } from '../../schemas/index.ts'
import type { EventEmitter } from 'node:events'
import type { ChangeFeed } from './changes.ts'
import type { CommitEvents } from './commits.ts'
import type { WebhookStore } from './webhooks.ts'

export type { StoredPlant }

/** created: stored now; unchanged: the same plant was already there (a retry); conflict: another plant has the id. */
export type CreateOutcome = 'created' | 'unchanged' | 'conflict'

export interface CreateResult {
  outcome: CreateOutcome
  /** The plant the store holds under the id after the call. */
  plant: StoredPlant
}

/** What an update replaces: a plant's name and tag (no tag removes it). */
export interface PlantChange { name: string, tag?: string }

/**
 * updated: written now; unchanged: the plant already was so, nothing written; stale: the
 * precondition refused the current plant, nothing written; absent: no such plant.
 */
export type UpdateOutcome = 'updated' | 'unchanged' | 'stale' | 'absent'

export interface UpdateResult {
  outcome: UpdateOutcome
  /** The plant the store holds under the id after the call; undefined when absent. */
  plant?: StoredPlant
  /** When updated: the plant as it was. */
  previous?: StoredPlant
}

/** deleted: gone now; stale: the precondition refused the plant as stored, nothing written; absent: no such plant. */
export type DeleteOutcome = 'deleted' | 'stale' | 'absent'

/** Whether the plant now stored may be replaced or deleted: decided against the plant the write replaces or deletes. */
export type Precondition = (current: StoredPlant) => boolean

export interface ListQuery {
  limit: number
  /** Only ids greater than this. */
  after?: bigint
  tag?: string
}

/**
 * What the plants module needs of a store; each engine implements it, the routes know no engine.
 * A change's event keeps the trace context of the request that made it, when traced (see GroupCommit).
 */
export interface PlantStore {
  create: (plant: StoredPlant) => Promise<CreateResult>
  get: (id: bigint) => Promise<StoredPlant | undefined>
  /** Plants in ascending id order: a keyset page, its cost independent of the store's size. */
  list: (query: ListQuery) => Promise<StoredPlant[]>
  /** Replaces a plant's name and tag, if `precondition` accepts the plant as stored when it is written. */
  update: (id: bigint, change: PlantChange, precondition?: Precondition) => Promise<UpdateResult>
  /** Deletes a plant, if `precondition` accepts the plant as stored when it is deleted. */
  delete: (id: bigint, precondition?: Precondition) => Promise<DeleteOutcome>
  /** Resolves when the store answers, rejects (StoreUnavailable) when it does not: readiness. */
  ping: () => Promise<void>
  /** The subscriptions and the outbox of their deliveries, in the same database. */
  readonly webhooks: WebhookStore
  /** The events of every change, in commit order: the outbox's events, read as a feed. */
  readonly changes: ChangeFeed
  /** `committed`, with what a transaction of this instance did, once it has committed. */
  readonly commits: EventEmitter<CommitEvents>
  /** Writes what is pending, answers it, then releases the store. */
  close: () => Promise<void>
}

export function samePlant (a: PlantChange, b: PlantChange): boolean {
  return a.name === b.name && a.tag === b.tag
}

/** An update's outcome when it writes nothing given the plant now stored; undefined when it must write. */
export function settledUpdate (current: StoredPlant | undefined, change: PlantChange, precondition?: Precondition): UpdateResult | undefined {
  if (current === undefined) return { outcome: 'absent' }
  if (precondition !== undefined && !precondition(current)) return { outcome: 'stale', plant: current }
  if (samePlant(current, change)) return { outcome: 'unchanged', plant: current }
  return undefined
}

/** A delete's outcome when it deletes nothing given the plant now stored; undefined when it must delete. */
export function settledDelete (current: StoredPlant | undefined, precondition?: Precondition): DeleteOutcome | undefined {
  if (current === undefined) return 'absent'
  if (precondition !== undefined && !precondition(current)) return 'stale'
  return undefined
}

/** The plant stored under `id` once `change` is written. */
export function changed (id: bigint, { name, tag }: PlantChange): StoredPlant {
  return tag === undefined ? { id, name } : { id, name, tag }
}

/** The smallest id a keyset page may hold: the first after `after`; undefined when no id can follow it. */
export function pageStart (after: bigint | undefined): bigint | undefined {
  if (after === undefined) return INT64_MIN
  return after < INT64_MAX ? after + 1n : undefined
}

/** A waiting write's size besides its strings (record, promise, request); a delete's whole size. */
export const WRITE_OVERHEAD_BYTES = 128

/** An estimate of the memory a plant holds while it waits to be written: its strings are UTF-16. */
export function plantBytes (plant: StoredPlant): number {
  return WRITE_OVERHEAD_BYTES + 2 * (plant.name.length + (plant.tag?.length ?? 0))
}

/** What an engine is given besides its configuration. */
export interface StoreContext {
  log: FastifyBaseLogger
  /** The most writes one group-commit transaction holds (it also holds at most MAX_BATCH_BYTES of them). */
  maxBatch: number
  /** The most bytes of writes that may wait; past it a write is refused at once with StoreBusy. */
  maxQueueBytes: number
  /** Told the size of every group-commit transaction, the smaller ones a refused batch is split into included. */
  onBatch: (size: number) => void
}
