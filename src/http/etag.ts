import { hash } from 'node:crypto'

/**
 * A strong entity tag (RFC 9110 section 8.8.3) for a representation: a digest of its
 * content, so it changes exactly when the content does, whatever happened in between
 * (a plant deleted and created again with another name has another tag). 132 bits of
 * SHA-256: no two contents a store holds share one.
 */
export function entityTag (content: string): string {
  return `"${hash('sha256', content, 'base64url').slice(0, 22)}"`
}

/**
 * Whether If-None-Match names this tag, so the client's copy is current (RFC 9110
 * section 13.1.2): `*` (the representation exists), or a list holding it, compared
 * weakly (`W/"x"` matches `"x"`). A malformed header names nothing: the full answer.
 */
export function notModified (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  if (ifNoneMatch.trim() === '*') return true
  return ifNoneMatch.split(',').some((listed) => {
    const tag = listed.trim()
    return (tag.startsWith('W/') ? tag.slice(2) : tag) === etag
  })
}
