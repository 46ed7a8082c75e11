import { createHash } from 'node:crypto'
import type { StoredPlant } from './store.ts'

const NO_TAG = 0xffff_ffff

/**
 * A SHA-256 over plants fed in ascending id order, from their exact values, whatever engine
 * they were read from: each id as 8 bytes (big-endian, signed), then the name and the tag as
 * a 4-byte length and their UTF-8 bytes (no tag: the length 0xFFFFFFFF, no bytes).
 */
export class PlantChecksum {
  readonly #hash = createHash('sha256')
  #count = 0

  add (plants: StoredPlant[]): void {
    for (const { id, name, tag } of plants) {
      const nameBytes = Buffer.from(name, 'utf8')
      const tagBytes = tag === undefined ? undefined : Buffer.from(tag, 'utf8')
      const head = Buffer.allocUnsafe(16)
      head.writeBigInt64BE(id, 0)
      head.writeUInt32BE(nameBytes.length, 8)
      head.writeUInt32BE(tagBytes?.length ?? NO_TAG, 12)
      this.#hash.update(head).update(nameBytes)
      if (tagBytes !== undefined) this.#hash.update(tagBytes)
    }
    this.#count += plants.length
  }

  get count (): number {
    return this.#count
  }

  /** `sha256:` and the hex digest; the checksum takes no more plants after. */
  digest (): string {
    return `sha256:${this.#hash.digest('hex')}`
  }
}
