import type { DatabaseConfig } from '../../src/store/open.ts'
import { PlantChecksum } from '../../src/store/plant-checksum.ts'
import type { StoredPlant } from '../../src/store/store.ts'
import { DestinationNotEmpty } from '../../src/store/transfer.ts'
import { openLoad, openSnapshot } from '../../src/store/transfer-open.ts'
import { Progress } from './progress.ts'

export interface CopyReport {
  /** The source's newest seq in the snapshot copied. */
  snapshotSeq: number
  plants: { count: number, source: string, destination: string }
  subscriptions: number
  disabled: number
  deliveries: number
  events: number
  restartedThrough: number
}

/** Counts what goes by. */
async function * counted<T> (chunks: AsyncIterable<T[]>, seen: (chunk: T[]) => void): AsyncIterable<T[]> {
  for await (const chunk of chunks) {
    seen(chunk)
    yield chunk
  }
}

/**
 * Copies one snapshot of the store `from` names into the store `to` names, in one
 * transaction there: plants (checked by checksum before the commit), subscriptions, the
 * pending deliveries and the events they need. The change feed's history restarts on the
 * destination past the latest seq of both. Refuses a destination holding plants or
 * subscriptions unless `replace`.
 */
export async function copyStore (from: DatabaseConfig, to: DatabaseConfig, replace: boolean): Promise<CopyReport> {
  if (JSON.stringify(from) === JSON.stringify(to)) throw new Error('the source and the destination are the same store')
  const snapshot = await openSnapshot(from)
  try {
    const load = await openLoad(to)
    try {
      if ((load.held.plants > 0 || load.held.subscriptions > 0) && !replace) throw new DestinationNotEmpty(load.held)
      await load.clear()
      const source = new PlantChecksum()
      const copying = new Progress('plants copied', snapshot.summary.plants)
      await load.plants(counted(snapshot.plants(), (chunk: StoredPlant[]) => {
        source.add(chunk)
        copying.add(chunk.length)
      }))
      copying.end()
      const subscriptions = await snapshot.subscriptions()
      await load.subscriptions(subscriptions)
      let events = 0
      await load.events(counted(snapshot.events(), (chunk) => { events += chunk.length }))
      let deliveries = 0
      await load.deliveries(counted(snapshot.deliveries(), (chunk) => { deliveries += chunk.length }))
      const restartedThrough = await load.restartHistory(Math.max(snapshot.summary.latest, load.held.latest))
      const destination = new PlantChecksum()
      const checking = new Progress('plants checked', source.count)
      for await (const chunk of load.written()) {
        destination.add(chunk)
        checking.add(chunk.length)
      }
      checking.end()
      const plants = { count: source.count, source: source.digest(), destination: destination.digest() }
      if (plants.source !== plants.destination || destination.count !== plants.count) {
        throw new Error(`the destination's plants differ from the source's (${destination.count} plants, ${plants.destination}; ` +
          `the source: ${plants.count}, ${plants.source}): nothing was committed`)
      }
      await load.commit()
      return {
        snapshotSeq: snapshot.summary.latest,
        plants,
        subscriptions: subscriptions.length,
        disabled: subscriptions.filter((s) => s.disabledAt !== null).length,
        deliveries,
        events,
        restartedThrough
      }
    } finally {
      await load.close()
    }
  } finally {
    await snapshot.close()
  }
}
