import { randomBytes } from 'node:crypto'
import type Database from 'better-sqlite3'
import { PLANT_CREATED, type EventType } from '../../../schemas/webhook.ts'
import type { KeyClaim, KeyOutcome, KeyRequest, SubscribeOutcome } from '../idempotency-keys.ts'
import { SqliteKeys } from './idempotency.ts'
import type { Run, SqliteCommit } from './durable.ts'
import { WRITE_OVERHEAD_BYTES } from '../store.ts'
import { eraseChunk, prepareWebhooks, replayChunk, type Outcome } from './webhook-statements.ts'
import { toDelivery, toSubscription } from '../webhook-rows.ts'
import {
  DEFAULT_MAX_PENDING, dueDelivery, eventBit, eventMask, PLANT_DELETED,
  type AttemptRecord, type DeliveryPage, type DueDelivery, type RestartOutcome,
  type StoredDelivery, type StoredSubscription, type WebhookStore
} from '../webhooks.ts'

// The webhook tables as the SQLite store reads and writes them. Times are milliseconds
// since the epoch. Every write goes through the store's group commit, so it shares its
// durable commit with the creates around it.

/** Submits a write to the store's group commit; resolves once it is committed. */
export type Write = <Result>(bytes: number, run: Run<Result>) => Promise<Result>
/** Runs a read, an unavailable file turned into StoreUnavailable; resolves once what it read is on disk. */
export type Read = <Result>(run: () => Result) => Promise<Result>

export class SqliteWebhooks implements WebhookStore {
  readonly #write: Write
  readonly #read: Read
  readonly #statements
  readonly #keys
  #maxPending = DEFAULT_MAX_PENDING

  constructor (db: Database.Database, write: Write, read: Read) {
    this.#write = write
    this.#read = read
    this.#statements = prepareWebhooks(db)
    this.#keys = new SqliteKeys(db)
  }

  /**
   * Writes a change's event and a delivery of it to each enabled subscription choosing it
   * (one at its bound is disabled instead), in the change's transaction; returns its seq.
   */
  announce (commit: SqliteCommit, type: EventType, plantId: bigint, payload: Buffer, traceContext: string | undefined): number | bigint {
    const now = Date.now()
    const event = this.#statements.event.run(plantId, type, payload, now, traceContext ?? null).lastInsertRowid
    commit.events++
    commit.subscribed ??= this.#statements.count.get()!.count > 0n
    const bit = eventBit(type)
    if (!commit.subscribed || this.#statements.wanted.get(bit)!.count === 0n) return event
    this.#statements.disable.run({ max: this.#maxPending, event, now, bit })
    const queued = this.#statements.announce.run({ plant: plantId, event, now, bit }).changes
    if (queued > 0) this.#statements.announced.run(bit)
    commit.deliveries += queued
    return event
  }

  /** Leaves a deleted plant's events before its deletion (`before`) to erase: called by the delete inside its transaction. */
  erasing (commit: SqliteCommit, plantId: bigint, before: number | bigint): void {
    this.#statements.erasing.run(plantId, before)
    commit.deletions++
  }

  async erase (limit: number): Promise<boolean> {
    // Looks before it writes, as the cleanup's other statements do.
    if (await this.#read(() => this.#statements.erasure.get()) === undefined) return false
    return await this.#write(WRITE_OVERHEAD_BYTES, () => eraseChunk(this.#statements, limit))
  }

  async subscribe ({ id, url, secret, events = [PLANT_CREATED], createdAt }: StoredSubscription, max: number, claim?: KeyClaim): Promise<SubscribeOutcome> {
    return await this.#write(WRITE_OVERHEAD_BYTES + 2 * url.length, (commit): SubscribeOutcome => {
      if (claim !== undefined && !this.#keys.holds(claim)) return 'lost'
      if (Number(this.#statements.count.get()!.count) >= max) return 'full'
      this.#statements.subscribe.run(id, url, secret, eventMask(events), createdAt.getTime())
      if (claim !== undefined) this.#keys.complete(claim, id)
      commit.subscribed = true
      commit.subscriptions++
      return 'subscribed'
    })
  }

  async claimKey (request: KeyRequest): Promise<KeyOutcome> {
    const lease = randomBytes(12).toString('base64url')
    return await this.#write(WRITE_OVERHEAD_BYTES + 2 * request.key.length, () => this.#keys.claim(request, lease, Date.now()))
  }

  async releaseKey (claim: KeyClaim): Promise<void> {
    await this.#write(WRITE_OVERHEAD_BYTES, () => this.#keys.release(claim))
  }

  async pruneKeys (limit: number): Promise<number> {
    if (!await this.#read(() => this.#keys.anyExpired(Date.now()))) return 0
    return await this.#write(WRITE_OVERHEAD_BYTES, () => this.#keys.prune(Date.now(), limit))
  }

  async subscriptions (): Promise<StoredSubscription[]> {
    return (await this.#read(() => this.#statements.subscriptions.all())).map(toSubscription)
  }

  async unsubscribe (id: string): Promise<boolean> {
    return await this.#write(WRITE_OVERHEAD_BYTES, (commit) => {
      const deleted = this.#statements.unsubscribe.run(id).changes
      commit.subscriptions += deleted
      return deleted === 1
    })
  }

  // The cleanup's statements look before they write: an outbox with nothing to delete costs no commit.
  async sweep (limit: number): Promise<number> {
    if (await this.#read(() => this.#statements.orphan.get()) === undefined) return 0
    return await this.#write(WRITE_OVERHEAD_BYTES, () => this.#statements.sweep.run(limit).changes)
  }

  async deliveries (webhookId: string, { limit, before }: DeliveryPage): Promise<StoredDelivery[]> {
    return (await this.#read(() => this.#statements.page.all(webhookId, before ?? Number.MAX_SAFE_INTEGER, limit))).map(toDelivery)
  }

  async restart (webhookId: string, deliveryId: string): Promise<RestartOutcome> {
    return await this.#write(WRITE_OVERHEAD_BYTES, (commit): RestartOutcome => {
      const row = this.#statements.status.get(webhookId, deliveryId)
      if (row === undefined) return 'absent'
      if (row.status === 'pending') return 'pending'
      // Erased, or (pruned) no longer kept: there is nothing to send.
      if (row.erased !== 0n) return 'erased'
      this.#statements.restart.run(Date.now(), deliveryId)
      this.#statements.unsettled.run(webhookId)
      commit.deliveries++
      return 'restarted'
    })
  }

  async claim (webhookId: string, limit: number, leaseMs: number): Promise<DueDelivery[]> {
    const lease = randomBytes(12).toString('base64url')
    return await this.#write(WRITE_OVERHEAD_BYTES, () => {
      const now = Date.now()
      const due: DueDelivery[] = []
      for (const { id, payload, attempts, trace_context: traceContext } of this.#statements.claim.all({ webhook: webhookId, now, limit, lease, until: now + leaseMs })) {
        if (payload !== null) due.push(dueDelivery(id, payload, Number(attempts), lease, traceContext))
        else this.#settle(this.#statements.failed, { id, lease, code: null, error: PLANT_DELETED, now, at: now })
      }
      return due
    })
  }

  async record ({ id, lease }: DueDelivery, { delivered, statusCode, error, retryInMs }: AttemptRecord): Promise<void> {
    await this.#write(WRITE_OVERHEAD_BYTES + 2 * (error?.length ?? 0), () => {
      const now = Date.now()
      const outcome = { id, lease, code: statusCode ?? null, error: error ?? null, now, at: now + (retryInMs ?? 0) }
      if (retryInMs !== undefined && !delivered) {
        this.#statements.retried.run(outcome)
        return
      }
      this.#settle(delivered ? this.#statements.delivered : this.#statements.failed, outcome)
    })
  }

  #settle (statement: Database.Statement<[Outcome], { webhook_id: string }>, outcome: Outcome): void {
    const settled = statement.get(outcome)
    if (settled !== undefined) this.#statements.settled.run(settled.webhook_id)
  }

  async release (deliveries: DueDelivery[]): Promise<void> {
    await this.#write(WRITE_OVERHEAD_BYTES * deliveries.length, () => {
      for (const { id, lease } of deliveries) this.#statements.release.run(id, lease)
    })
  }

  async pending (): Promise<number> {
    return Number((await this.#read(() => this.#statements.pending.get()))!.count)
  }

  async prune (settledBefore: Date, limit: number): Promise<number> {
    if (await this.#read(() => this.#statements.settledBefore.get(settledBefore.getTime())) === undefined) return 0
    return await this.#write(WRITE_OVERHEAD_BYTES, () => this.#statements.prune.run(settledBefore.getTime(), limit).changes)
  }

  limitPending (max: number): void {
    this.#maxPending = max
  }

  async enable (id: string): Promise<boolean> {
    return await this.#write(WRITE_OVERHEAD_BYTES, (commit) => {
      if (this.#statements.exists.get(id) === undefined) return false
      this.#statements.enable.run(id)
      commit.subscriptions++
      return true
    })
  }

  async replay (id: string, limit: number): Promise<number> {
    return await this.#write(WRITE_OVERHEAD_BYTES, (commit) => {
      const { queued, examined } = replayChunk(this.#statements, id, limit, this.#maxPending)
      commit.deliveries += queued
      return examined
    })
  }

  async pruneEvents (createdBefore: Date, after: number, limit: number): Promise<number | undefined> {
    const chunk = { after, limit, before: createdBefore.getTime() }
    const { examined, last, oldest, newest } = (await this.#read(() => this.#statements.eventChunk.get(chunk)))!
    // Events after the chunk are younger than its oldest: none old enough, nothing to delete.
    if (Number(examined) === 0 || Number(oldest) >= chunk.before) return undefined
    await this.#write(WRITE_OVERHEAD_BYTES, () => {
      const pruned = this.#statements.pruneEvents.all(chunk)
      if (pruned.length > 0) this.#statements.horizon.run(pruned.reduce((last, { seq }) => seq > last ? seq : last, 0n))
    })
    return Number(examined) === limit && Number(newest) < chunk.before ? Number(last) : undefined
  }
}
