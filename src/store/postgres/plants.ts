import type { StoredPlant } from '../store.ts'

// The plants table as the PostgreSQL store reads it; names and tags are bytea, kept byte for byte.

/** A row as node-postgres returns it: int8 as a string, bytea as a Buffer. */
export interface Row { id: string, name: Buffer, tag: Buffer | null }

export const SELECT_PLANTS = 'SELECT id, name, tag FROM plants'

/**
 * A page of one tag: an index range scan of plants_by_tag_hash, which holds the tag's
 * md5, so that a tag of any length fits a btree entry; comparing the tag itself rules
 * out a collision. Exported for the test that checks its plan.
 */
export const SELECT_PAGE_BY_TAG = `${SELECT_PLANTS} WHERE md5(tag) = md5($1::bytea) AND tag = $1 AND id >= $2 ORDER BY id LIMIT $3`

export function toPlant ({ id, name, tag }: Row): StoredPlant {
  const plant = { id: BigInt(id), name: name.toString('utf8') }
  return tag === null ? plant : { ...plant, tag: tag.toString('utf8') }
}

/** A name or tag as the bytea columns keep it: its UTF-8 bytes, byte for byte. */
export function utf8 (text: string): Buffer {
  return Buffer.from(text, 'utf8')
}

export function bytes (text: string | undefined): Buffer | null {
  return text === undefined ? null : utf8(text)
}
