import type { Metrics } from '../plugins/metrics.ts'
import type { CreateResult, PlantStore } from '../store/store.ts'
import { tracing } from '../tracing/hooks.ts'

/**
 * The store with each operation's latency and outcome recorded, and, when the request is
 * traced, its trace context given with each change for the change's event to keep (its
 * deliveries' traces link to it); the engines stay unaware of both.
 */
export function instrumented (store: PlantStore, metrics: Metrics): PlantStore {
  const histogram = metrics.storeOperations
  async function timed<T> (operation: string, work: Promise<T>, outcome: (result: T) => string): Promise<T> {
    const started = performance.now()
    try {
      const result = await work
      histogram.observe({ operation, outcome: outcome(result) }, (performance.now() - started) / 1000)
      return result
    } catch (err) {
      histogram.observe({ operation, outcome: 'error' }, (performance.now() - started) / 1000)
      throw err
    }
  }
  const created = (result: CreateResult): string => result.outcome
  return {
    create: async (plant) => {
      const traceContext = tracing.spans?.traceContext()
      if (traceContext === undefined) return await timed('create', store.create(plant), created)
      const result = await timed('create', store.create({ ...plant, traceContext }), created)
      // Answered as given: the trace context is the event's, not the plant's.
      return result.outcome === 'created' ? { outcome: 'created', plant } : result
    },
    get: async (id) => await timed('get', store.get(id), (plant) => plant === undefined ? 'absent' : 'found'),
    list: async (query) => await timed('list', store.list(query), () => 'ok'),
    update: async (id, change, precondition) => {
      const traceContext = tracing.spans?.traceContext()
      const traced = traceContext === undefined ? change : { ...change, traceContext }
      return await timed('update', store.update(id, traced, precondition), (result) => result.outcome)
    },
    delete: async (id, origin, precondition) => {
      const traceContext = tracing.spans?.traceContext()
      return await timed('delete', store.delete(id, traceContext === undefined ? origin : { ...origin, traceContext }, precondition), (outcome) => outcome)
    },
    ping: async () => await store.ping(),
    webhooks: store.webhooks,
    changes: {
      read: async (query) => await timed('changes', store.changes.read(query), () => 'ok'),
      latest: async () => await store.changes.latest(),
      onChanged: (listener) => store.changes.onChanged(listener)
    },
    close: async () => await store.close()
  }
}
