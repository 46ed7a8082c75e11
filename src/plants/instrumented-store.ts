import type { Metrics } from '../metrics.js'
import type { PlantStore } from '../store/store.js'

/** The store with each operation's latency and outcome recorded; the engines stay unaware. */
export function instrumented (store: PlantStore, metrics: Metrics): PlantStore {
  // One histogram child per (operation, outcome), made once: prom-client would hash a
  // label object on every observation.
  const series = new Map<string, ReturnType<typeof metrics.storeOperations.labels>>()
  function observe (operation: string, outcome: string, seconds: number): void {
    const key = `${operation} ${outcome}`
    let child = series.get(key)
    if (child === undefined) {
      child = metrics.storeOperations.labels(operation, outcome)
      series.set(key, child)
    }
    child.observe(seconds)
  }
  async function timed<T> (operation: string, work: Promise<T>, outcome: (result: T) => string): Promise<T> {
    const started = performance.now()
    try {
      const result = await work
      observe(operation, outcome(result), (performance.now() - started) / 1000)
      return result
    } catch (err) {
      observe(operation, 'error', (performance.now() - started) / 1000)
      throw err
    }
  }
  return {
    create: async (plant) => await timed('create', store.create(plant), (result) => result.outcome),
    get: async (id) => await timed('get', store.get(id), (plant) => plant === undefined ? 'absent' : 'found'),
    list: async (query) => await timed('list', store.list(query), () => 'ok'),
    delete: async (id) => await timed('delete', store.delete(id), (deleted) => deleted ? 'deleted' : 'absent'),
    ping: async () => await store.ping(),
    close: async () => await store.close()
  }
}
