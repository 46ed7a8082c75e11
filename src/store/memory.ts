import { samePlant, type CreateResult, type PlantRecord, type PlantStore } from './store.js'

/** Keeps plants in a Map: for tests and throwaway demos, gone when the process ends. */
export class MemoryStore implements PlantStore {
  readonly #plants = new Map<bigint, PlantRecord>()

  async create (plant: PlantRecord): Promise<CreateResult> {
    const existing = this.#plants.get(plant.id)
    if (existing === undefined) {
      this.#plants.set(plant.id, plant)
      return { outcome: 'created', plant }
    }
    return { outcome: samePlant(existing, plant) ? 'unchanged' : 'conflict', plant: existing }
  }

  async close (): Promise<void> {}
}
