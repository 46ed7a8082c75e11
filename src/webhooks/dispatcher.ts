import type { KeyObject } from 'node:crypto'
import type { EventEmitter } from 'node:events'
import type { FastifyBaseLogger } from 'fastify'
import type { Metrics } from '../plugins/metrics.ts'
import type { CommitEvents } from '../store/commits.ts'
import type { DueDelivery, StoredSubscription, WebhookStore } from '../store/webhooks.ts'
import { OutboxUpkeep } from './outbox-upkeep.ts'
import { ReceiverBreaker } from './receiver-breaker.ts'
import type { AttemptResult, Sender } from './sender.ts'
import { FAILURES_TO_PAUSE, MAX_PAUSE_MS, POLL_INTERVAL_MS, retryDelay, type DispatcherSettings } from './dispatch-policy.ts'
import { signingKey } from './signature.ts'
import { tracing } from '../tracing/hooks.ts'

/** A subscription as the dispatcher holds it: with its signing key, made once. */
type Subscribed = StoredSubscription & { key: KeyObject }

/**
 * Delivers the outbox in the background: due deliveries are leased (one instance attempts
 * each) and attempted `concurrency` at once per subscription, as many again claimed ahead,
 * so a dead receiver holds up only its own; one that keeps failing is paused, then probed.
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
  readonly #upkeep: OutboxUpkeep
  #round: Promise<void> | undefined
  #again = false
  #closed = false

  constructor (store: WebhookStore, commits: EventEmitter<CommitEvents>, sender: Sender, settings: DispatcherSettings, log: FastifyBaseLogger, metrics: Metrics) {
    this.#store = store
    this.#sender = sender
    this.#settings = settings
    this.#log = log
    this.#attemptSeconds = metrics.webhookAttempts
    // A wait for a slot, the attempt and its record; then another instance may take it over.
    this.#leaseMs = 3 * settings.timeoutMs + 1000
    this.#breaker = new ReceiverBreaker(FAILURES_TO_PAUSE, settings.retryBaseMs, MAX_PAUSE_MS)
    this.#upkeep = new OutboxUpkeep(store, log)
    // What this instance committed is acted on at once; another instance's, at the next poll.
    commits.on('committed', ({ deliveries, subscriptions }) => { if (subscriptions > 0) this.refresh(); else if (deliveries > 0) this.wake() })
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
      this.#upkeep.refreshed(subscriptions)
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
    this.#upkeep.close()
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
      // A throw is a bug: logged, the delivery retried once its lease expires, the process kept.
      .catch((err: unknown) => { this.#log.error({ err, webhook: subscription.id, delivery: delivery.id }, 'webhooks: an attempt failed unexpectedly; the delivery will be attempted again') })
      .finally(() => this.#attempts.delete(attempt))
    this.#attempts.add(attempt)
  }

  /** Frees a slot and starts the next ready delivery; claims more once half of those claimed ahead are used. */
  #freeSlot (subscription: Subscribed): void {
    const { id } = subscription
    const left = this.#inFlight.get(id)! - 1
    // Forgotten when idle: subscriptions come and go.
    if (left === 0) this.#inFlight.delete(id)
    else this.#inFlight.set(id, left)
    this.#fill(subscription)
    if (this.#more.has(id) && this.#readyFor(id).length <= this.#settings.concurrency / 2) this.wake()
  }

  /** Sends one delivery and records it; the slot is freed before the record (a shared commit), the lease guarding it. */
  async #attempt (subscription: Subscribed, delivery: DueDelivery, sent: () => void): Promise<void> {
    const started = performance.now()
    let pauseMs: number | undefined
    const send = async (): Promise<AttemptResult> => await this.#sender.send({ url: subscription.url, key: subscription.key, id: delivery.id, payload: delivery.payload })
    const spans = tracing.spans
    const result = await (spans === undefined ? send() : spans.attempt({ webhook: subscription.id, delivery: delivery.id, attempt: delivery.attempts + 1, traceContext: delivery.traceContext }, send))
      // Told to the breaker before the slot is freed: a pause keeps it empty.
      .then((result) => { pauseMs = this.#counted(subscription, result); return result })
      .finally(sent)
    const attempts = delivery.attempts + 1
    const retryInMs = result.delivered || attempts >= this.#settings.maxAttempts
      ? undefined
      : Math.round(retryDelay(attempts, this.#settings.retryBaseMs))
    const outcome = result.delivered ? 'delivered' : retryInMs === undefined ? 'failed' : 'retried'
    this.#attemptSeconds.observe({ outcome }, (performance.now() - started) / 1000)
    // The detail (addresses, certificate names) is the operator's: logged, never in the delivery log.
    const details = { webhook: subscription.id, delivery: delivery.id, attempt: attempts, statusCode: result.statusCode, error: result.error, detail: result.detail }
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

  /** Holds a failing receiver's deliveries for `pauseMs`, then tries one; those claimed ahead go back (their leases could expire). */
  async #pause (subscription: Subscribed, pauseMs: number): Promise<void> {
    this.#log.warn({ webhook: subscription.id, pauseMs }, `webhook receiver keeps failing; its deliveries wait ${pauseMs} ms, then one is tried alone`)
    this.#after(pauseMs, () => this.wake())
    await this.#release(this.#readyFor(subscription.id).splice(0))
  }

  #every (ms: number, run: () => void): void {
    this.#after(ms, () => { run(); this.#every(ms, run) })
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
