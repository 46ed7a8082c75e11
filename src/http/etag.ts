import { hash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { PreconditionUnsupported } from './errors.ts'

/** A strong entity tag (RFC 9110 8.8.3): 132 bits of SHA-256 of the content, so it changes exactly with it. */
export function entityTag (content: string): string {
  return `"${hash('sha256', content, 'base64url').slice(0, 22)}"`
}

/** Whether If-None-Match (`*` or a list, compared weakly, RFC 9110 13.1.2) names this tag. */
export function notModified (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  if (ifNoneMatch.trim() === '*') return true
  return ifNoneMatch.split(',').some((listed) => {
    const tag = listed.trim()
    return (tag.startsWith('W/') ? tag.slice(2) : tag) === etag
  })
}

/** Whether If-Match (`*` or a list, compared strongly, RFC 9110 13.1.1) names this tag: a weak or malformed entry never does. */
export function matches (ifMatch: string, etag: string): boolean {
  if (ifMatch.trim() === '*') return true
  return ifMatch.split(',').some((listed) => listed.trim() === etag)
}

/**
 * A write's preconditions (RFC 9110 13.2.2): If-Match, then If-None-Match, against the
 * target's current tag (undefined: it exists without one, as a collection does); nothing
 * when the request sends neither. If-Unmodified-Since is refused: no plant keeps a
 * modification date, and a write it guards would otherwise be unconditional (with
 * If-Match it is ignored, as RFC 9110 13.1.4 says).
 */
export function writePrecondition (headers: IncomingHttpHeaders): ((etag: string | undefined) => boolean) | undefined {
  const ifMatch = headers['if-match']
  const ifNoneMatch = headers['if-none-match']
  if (ifMatch === undefined && headers['if-unmodified-since'] !== undefined) throw new PreconditionUnsupported()
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined
  return (etag) => (ifMatch === undefined || (etag === undefined ? ifMatch.trim() === '*' : matches(ifMatch, etag))) &&
    (ifNoneMatch === undefined || (etag === undefined ? ifNoneMatch.trim() !== '*' : !notModified(ifNoneMatch, etag)))
}
