import type { Metrics } from '../plugins/metrics.ts'
import type { PlantStore } from '../store/store.ts'

/** The store with each operation's latency and outcome recorded; the engines stay unaware of it. */
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
  return {
    create: async (plant) => await timed('create', store.create(plant), (result) => result.outcome),
    get: async (id) => await timed('get', store.get(id), (plant) => plant === undefined ? 'absent' : 'found'),
    list: async (query) => await timed('list', store.list(query), () => 'ok'),
    update: async (id, change, precondition) => await timed('update', store.update(id, change, precondition), (result) => result.outcome),
    delete: async (id, precondition) => await timed('delete', store.delete(id, precondition), (outcome) => outcome),
    ping: async () => await store.ping(),
    webhooks: store.webhooks,
    changes: {
      read: async (query) => await timed('changes', store.changes.read(query), () => 'ok'),
      latest: async () => await store.changes.latest()
    },
    commits: store.commits,
    close: async () => await store.close()
  }
}
