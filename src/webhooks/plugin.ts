import type { EventEmitter } from 'node:events'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { CommitEvents } from '../store/commits.ts'
import type { WebhookStore } from '../store/webhooks.ts'
import { AddressPolicy } from './address-policy.ts'
import type { Resolve } from './resolver.ts'
import { Dispatcher } from './dispatcher.ts'
import { OutboxCleanup } from './outbox-cleanup.ts'
import webhookRoutes from './routes.ts'
import { Sender } from './sender.ts'

export interface WebhooksOptions {
  store: WebhookStore
  /** The store's commits: what this instance queued goes out at once, what it deleted is erased. */
  commits: EventEmitter<CommitEvents>
  /** How host names are resolved; the system's resolver unless a test gives its own. */
  resolve?: Resolve
}

/**
 * The webhooks module: the subscription routes, the dispatcher that delivers the outbox
 * (written by the plants module's creates) and its cleanup, from ready until close.
 */
async function webhooks (app: FastifyInstance, { store, commits, resolve }: WebhooksOptions): Promise<void> {
  const { config } = app
  store.limitPending(config.WEBHOOK_MAX_PENDING)
  const policy = new AddressPolicy(config.WEBHOOK_ALLOW_PRIVATE, resolve)
  const settings = {
    concurrency: config.webhookConcurrency,
    maxAttempts: config.WEBHOOK_MAX_ATTEMPTS,
    retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    closeWaitMs: config.webhookCloseWaitMs
  }
  const dispatcher = new Dispatcher(store, commits, new Sender(policy, settings.timeoutMs), settings, app.log, app.metrics)
  const cleanup = new OutboxCleanup(store, app.log)
  app.metrics.pendingDeliveries = async () => await store.pending()
  // A deleted plant's events read as erased at once, a deleted subscription's deliveries are
  // never claimed: the cleanup erases and deletes their data.
  commits.on('committed', ({ deletions, subscriptions }) => { if (deletions > 0 || subscriptions > 0) cleanup.wake() })
  app.addHook('onReady', async () => {
    dispatcher.start()
    cleanup.start()
  })
  app.addHook('onClose', async () => await Promise.all([dispatcher.close(), cleanup.close()]))
  await app.register(webhookRoutes, { store, policy })
}

export default fp(webhooks, { name: 'webhooks', fastify: '5.x', decorators: { fastify: ['config'] }, dependencies: ['metrics', 'auth'], encapsulate: true })
