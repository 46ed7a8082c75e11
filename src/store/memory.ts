import { samePlant, type CreateResult, type ListQuery, type StoredPlant, type PlantStore } from './store.js'

/** Keeps plants in memory: for tests and throwaway demos, gone when the process ends. */
export class MemoryStore implements PlantStore {
  readonly #plants = new Map<bigint, StoredPlant>()
  /** Every id, ascending, so a page starts with a binary search as an index would. */
  readonly #ids: bigint[] = []

  async create (plant: StoredPlant): Promise<CreateResult> {
    const existing = this.#plants.get(plant.id)
    if (existing !== undefined) {
      return { outcome: samePlant(existing, plant) ? 'unchanged' : 'conflict', plant: existing }
    }
    this.#plants.set(plant.id, plant)
    this.#ids.splice(this.#firstIndexAbove(plant.id - 1n), 0, plant.id)
    return { outcome: 'created', plant }
  }

  async get (id: bigint): Promise<StoredPlant | undefined> {
    return this.#plants.get(id)
  }

  async list ({ limit, after, tag }: ListQuery): Promise<StoredPlant[]> {
    const page: StoredPlant[] = []
    const start = after === undefined ? 0 : this.#firstIndexAbove(after)
    for (let i = start; i < this.#ids.length && page.length < limit; i++) {
      const plant = this.#plants.get(this.#ids[i])!
      if (tag === undefined || plant.tag === tag) page.push(plant)
    }
    return page
  }

  async delete (id: bigint): Promise<boolean> {
    if (!this.#plants.delete(id)) return false
    this.#ids.splice(this.#firstIndexAbove(id - 1n), 1)
    return true
  }

  async ping (): Promise<void> {}

  async close (): Promise<void> {}

  #firstIndexAbove (id: bigint): number {
    let low = 0
    let high = this.#ids.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (this.#ids[mid] <= id) low = mid + 1
      else high = mid
    }
    return low
  }
}
