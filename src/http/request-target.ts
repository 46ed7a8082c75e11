import type { IncomingMessage } from 'node:http'
import type { FastifyRequest } from 'fastify'

/**
 * The target as path and query, for `rewriteUrl`: an absolute-form target (RFC 9112) would
 * otherwise reach the log and Swagger UI's redirect with the host it names.
 */
export function originForm (req: IncomingMessage): string {
  const url = req.url ?? '/'
  if (url.charCodeAt(0) === 47) return url // '/': the usual case, first
  const schemeEnd = url.indexOf('://')
  const scheme = schemeEnd === -1 ? '' : url.slice(0, schemeEnd).toLowerCase()
  if (scheme !== 'http' && scheme !== 'https') return url
  for (let i = schemeEnd + 3; i < url.length; i++) {
    const c = url.charCodeAt(i)
    if (c === 47) return url.slice(i)
    if (c === 63) return `/${url.slice(i)}` // '?': a query after no path
  }
  return '/'
}

/** True when the target, once in origin-form, is a path (or `*` for OPTIONS, RFC 9112 3.2.4); old routers matched `*health`. */
export function isOriginForm ({ url, method }: FastifyRequest): boolean {
  return url.charCodeAt(0) === 47 || (url === '*' && method === 'OPTIONS')
}
