import type { KeyObject } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Metrics } from '../plugins/metrics.ts'
import type { DueDelivery, StoredSubscription, WebhookStore } from '../store/webhooks.ts'
import { monotonicMs } from '../monotonic-clock.ts'
import { ReceiverBreaker } from './receiver-breaker.ts'
import type { AttemptResult, Sender } from './sender.ts'
import { signingKey } from './signature.ts'

export interface DispatcherSettings {
  /** Attempts in flight at once for one subscription, in this instance. */
  concurrency: number
  /** The attempts a delivery gets before it is failed. */
  maxAttempts: number
  /** The first retry waits up to this long; each next one up to twice as long, up to MAX_RETRY_DELAY_MS. */
  retryBaseMs: number
  /** How long one attempt may take. */
  timeoutMs: number
  /** How long closing waits for the attempts in flight before cutting them off. */
  closeWaitMs: number
}

export const MAX_RETRY_DELAY_MS = 60 * 60 * 1000
// Due deliveries are looked for this often even when nothing announces them: retries
// come due, and other instances write deliveries this one is not told of.
const POLL_INTERVAL_MS = 1000
// Delivered and failed deliveries are kept this long in the delivery log, then deleted.
export const RETENTION_MS = 7 * 24 * 60 * 60 * 1000
const PRUNE_INTERVAL_MS = 10 * 60 * 1000
// A receiver whose attempts fail this many times in a row is paused (ReceiverBreaker):
// enough that a few errors of a working receiver never pause it.
const FAILURES_TO_PAUSE = 10
// A paused receiver is tried again at least this often.
const MAX_PAUSE_MS = 60 * 1000

/** A subscription as the dispatcher holds it: with its signing key, made once. */
type Subscribed = StoredSubscription & { key: KeyObject }

/** Full jitter: a random wait up to the exponential step, so that receivers that come back are not hit all at once. */
export function retryDelay (attemptsMade: number, baseMs: number): number {
  return Math.random() * Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.min(attemptsMade - 1, 40))
}

/**
 * Delivers what the outbox holds, in the background. Each subscription's due deliveries
 * are claimed (leased, so that one instance at a time attempts each) and attempted, at
 * most `concurrency` at once per subscription: a slow or dead receiver holds up only its
 * own deliveries. As many again are claimed ahead, so that a slot that frees starts its
 * next attempt at once rather than after a claim's commit. Each attempt is recorded:
 * delivered, retried with backoff, or failed after the last attempt. Closing stops
 * claiming, hands back what was claimed ahead, and waits for the attempts in flight, for
 * at most closeWaitMs; what was not attempted stays pending for the next start. A
 * receiver that keeps failing is paused, then probed with one delivery at a time.
 */
export class Dispatcher {
  readonly #store: WebhookStore
  readonly #sender: Sender
  readonly #settings: DispatcherSettings
  readonly #log: FastifyBaseLogger
  readonly #attemptSeconds: Metrics['webhookAttempts']
  readonly #leaseMs: number
  readonly #breaker: ReceiverBreaker
  #subscriptions: Subscribed[] = []
  readonly #inFlight = new Map<string, number>()
  /** Per subscription: deliveries claimed ahead, waiting for a slot, oldest first. */
  readonly #ready = new Map<string, DueDelivery[]>()
  readonly #attempts = new Set<Promise<void>>()
  /** Subscriptions whose last claim got all it asked for: more may be due. */
  readonly #more = new Set<string>()
  readonly #timers = new Set<NodeJS.Timeout>()
  #round: Promise<void> | undefined
  #again = false
  #closed = false
  #lastPrune = -Infinity

  constructor (store: WebhookStore, sender: Sender, settings: DispatcherSettings, log: FastifyBaseLogger, metrics: Metrics) {
    this.#store = store
    this.#sender = sender
    this.#settings = settings
    this.#log = log
    this.#attemptSeconds = metrics.webhookAttempts
    // Long enough to wait for a slot (behind one attempt at most), for its own attempt
    // and for its record; then another instance may take it over.
    this.#leaseMs = 3 * settings.timeoutMs + 1000
    this.#breaker = new ReceiverBreaker(FAILURES_TO_PAUSE, settings.retryBaseMs, MAX_PAUSE_MS)
    store.onAnnounced(() => this.wake())
  }

  start (): void {
    this.#every(POLL_INTERVAL_MS, () => this.refresh())
    this.refresh()
  }

  /** Reads the subscriptions again (they may change on another instance), then looks for due deliveries. */
  refresh (): void {
    this.#store.subscriptions().then((subscriptions) => {
      this.#subscriptions = subscriptions.map((subscription) => ({ ...subscription, key: signingKey(subscription.secret) }))
      const gone = (id: string): boolean => !subscriptions.some((subscription) => subscription.id === id)
      for (const id of this.#more) if (gone(id)) this.#more.delete(id)
      for (const id of this.#ready.keys()) if (gone(id)) this.#ready.delete(id)
      this.#breaker.retain((id) => !gone(id))
      this.wake()
      // Deliveries go with their subscription: without one there is nothing to prune.
      if (subscriptions.length > 0 && monotonicMs() - this.#lastPrune > PRUNE_INTERVAL_MS) this.#prune()
    }, (err: unknown) => this.#log.debug({ err }, 'webhooks: cannot read the subscriptions; trying again'))
  }

  /** Claims and starts what is due now; coalesced, one round at a time. */
  wake (): void {
    if (this.#closed) return
    if (this.#round !== undefined) {
      this.#again = true
      return
    }
    this.#round = this.#claimRounds().finally(() => { this.#round = undefined })
  }

  async close (): Promise<void> {
    this.#closed = true
    for (const timer of this.#timers) clearTimeout(timer)
    await this.#round
    await this.#releaseReady()
    // An attempt still running then is cut off, recorded as failed and retried later.
    const cutOff = setTimeout(() => this.#sender.close(), this.#settings.closeWaitMs)
    await Promise.all(this.#attempts)
    clearTimeout(cutOff)
    this.#sender.close()
  }

  /** Hands back what was claimed ahead and not started, so that the next start (or another instance) need not wait for its lease. */
  async #releaseReady (): Promise<void> {
    const ready = [...this.#ready.values()].flat()
    this.#ready.clear()
    await this.#release(ready)
  }

  async #release (ready: DueDelivery[]): Promise<void> {
    if (ready.length === 0) return
    try {
      await this.#store.release(ready)
    } catch (err) {
      this.#log.debug({ err }, 'webhooks: cannot release the deliveries claimed ahead; their leases will expire')
    }
  }

  #prune (): void {
    this.#lastPrune = monotonicMs()
    this.#store.prune(new Date(Date.now() - RETENTION_MS)).catch((err: unknown) =>
      this.#log.debug({ err }, 'webhooks: cannot prune the delivery log; trying again later'))
  }

  async #claimRounds (): Promise<void> {
    const { concurrency } = this.#settings
    do {
      this.#again = false
      for (const subscription of this.#subscriptions) {
        if (this.#closed) return
        const allowed = this.#breaker.allowed(subscription.id, concurrency)
        // Twice the slots, to claim ahead; a paused receiver's probe is claimed alone.
        const room = allowed === concurrency ? 2 * concurrency : allowed
        const wanted = room - (this.#inFlight.get(subscription.id) ?? 0) - this.#readyFor(subscription.id).length
        if (wanted <= 0) {
          // A pause that ended finds them waiting.
          this.#fill(subscription)
          continue
        }
        let due: DueDelivery[]
        try {
          due = await this.#store.claim(subscription.id, wanted, this.#leaseMs)
        } catch (err) {
          this.#log.debug({ err }, 'webhooks: cannot claim deliveries; trying again')
          return
        }
        if (due.length === wanted) this.#more.add(subscription.id)
        else this.#more.delete(subscription.id)
        if (this.#breaker.allowed(subscription.id, concurrency) === 0) {
          // Paused while claiming: handed back, as #pause does with those claimed before.
          await this.#release(due)
          continue
        }
        this.#readyFor(subscription.id).push(...due)
        this.#fill(subscription)
      }
    } while (this.#again && !this.#closed)
  }

  #readyFor (id: string): DueDelivery[] {
    let ready = this.#ready.get(id)
    if (ready === undefined) {
      ready = []
      this.#ready.set(id, ready)
    }
    return ready
  }

  /** Starts the subscription's ready deliveries while it has free slots. */
  #fill (subscription: Subscribed): void {
    const ready = this.#readyFor(subscription.id)
    const allowed = this.#breaker.allowed(subscription.id, this.#settings.concurrency)
    while (ready.length > 0 && !this.#closed && (this.#inFlight.get(subscription.id) ?? 0) < allowed) {
      this.#start(subscription, ready.shift()!)
    }
  }

  #start (subscription: Subscribed, delivery: DueDelivery): void {
    this.#inFlight.set(subscription.id, (this.#inFlight.get(subscription.id) ?? 0) + 1)
    const attempt = this.#attempt(subscription, delivery, () => this.#freeSlot(subscription))
      // An attempt that throws is a bug: logged, and its delivery is attempted again once its
      // lease expires. Unhandled, it ended the process, and every restart's.
      .catch((err: unknown) => { this.#log.error({ err, webhook: subscription.id, delivery: delivery.id }, 'webhooks: an attempt failed unexpectedly; the delivery will be attempted again') })
      .finally(() => this.#attempts.delete(attempt))
    this.#attempts.add(attempt)
  }

  /**
   * Frees a slot of the subscription and starts its next ready delivery in it; claims
   * more once half of those claimed ahead are used, if more may be due.
   */
  #freeSlot (subscription: Subscribed): void {
    const { id } = subscription
    const left = this.#inFlight.get(id)! - 1
    // Forgotten when idle: subscriptions come and go.
    if (left === 0) this.#inFlight.delete(id)
    else this.#inFlight.set(id, left)
    this.#fill(subscription)
    if (this.#more.has(id) && this.#readyFor(id).length <= this.#settings.concurrency / 2) this.wake()
  }

  /**
   * Sends one delivery and records what came of it. The slot is freed once the
   * receiver's answer is in (its connection free again), before the record: recording
   * waits for a commit shared with the creates, and holding the slot through it would
   * cap deliveries at `concurrency` a commit. The lease keeps the delivery from being
   * claimed again meanwhile.
   */
  async #attempt (subscription: Subscribed, delivery: DueDelivery, sent: () => void): Promise<void> {
    const started = performance.now()
    let pauseMs: number | undefined
    const result = await this.#sender.send({ url: subscription.url, key: subscription.key, id: delivery.id, payload: delivery.payload })
      // Told to the breaker before the slot is freed: a pause keeps it empty.
      .then((result) => { pauseMs = this.#counted(subscription, result); return result })
      .finally(sent)
    const attempts = delivery.attempts + 1
    const retryInMs = result.delivered || attempts >= this.#settings.maxAttempts
      ? undefined
      : Math.round(retryDelay(attempts, this.#settings.retryBaseMs))
    const outcome = result.delivered ? 'delivered' : retryInMs === undefined ? 'failed' : 'retried'
    this.#attemptSeconds.observe({ outcome }, (performance.now() - started) / 1000)
    const details = { webhook: subscription.id, delivery: delivery.id, attempt: attempts, statusCode: result.statusCode, error: result.error }
    if (result.delivered) this.#log.debug(details, 'webhook delivered')
    else if (retryInMs === undefined) this.#log.warn(details, `webhook delivery failed after ${attempts} attempts; it stays failed until retried`)
    else this.#log.warn({ ...details, retryInMs }, 'webhook attempt failed; retrying')
    if (pauseMs !== undefined) await this.#pause(subscription, pauseMs)
    try {
      await this.#store.record(delivery, { ...result, retryInMs })
    } catch (err) {
      // The lease expires and the delivery is attempted again: at least once, never lost.
      this.#log.warn({ err, webhook: subscription.id, delivery: delivery.id }, 'webhooks: cannot record an attempt; the delivery will be attempted again')
      return
    }
    if (retryInMs !== undefined && retryInMs < POLL_INTERVAL_MS) this.#after(retryInMs, () => this.wake())
  }

  /** Tells the breaker what came of an attempt; returns the pause it starts, if any. */
  #counted (subscription: Subscribed, result: AttemptResult): number | undefined {
    if (!result.delivered) return this.#breaker.failed(subscription.id)
    if (this.#breaker.delivered(subscription.id)) this.#log.info({ webhook: subscription.id }, 'webhook receiver answers again; its deliveries resume')
    return undefined
  }

  /**
   * Holds a failing receiver's deliveries for `pauseMs`, then tries one: those claimed
   * ahead are handed back, since their leases could run out while they wait.
   */
  async #pause (subscription: Subscribed, pauseMs: number): Promise<void> {
    this.#log.warn({ webhook: subscription.id, pauseMs }, `webhook receiver keeps failing; its deliveries wait ${pauseMs} ms, then one is tried alone`)
    this.#after(pauseMs, () => this.wake())
    await this.#release(this.#readyFor(subscription.id).splice(0))
  }

  #every (ms: number, run: () => void): void {
    this.#after(ms, () => {
      run()
      this.#every(ms, run)
    })
  }

  #after (ms: number, run: () => void): void {
    if (this.#closed) return
    const timer = setTimeout(() => {
      this.#timers.delete(timer)
      run()
    }, ms)
    timer.unref()
    this.#timers.add(timer)
  }
}
