import type { IncomingMessage } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { TargetInvalid } from './errors.ts'

/**
 * The request's target as a path and query (origin-form), for Fastify's `rewriteUrl`.
 * A target sent whole, as to a proxy (`GET http://host/docs HTTP/1.1`, the absolute-form
 * RFC 9112 has a server accept), was routed by its path, but its URL went on as sent:
 * into the log line, and into the redirect of Swagger UI's /docs/static/index.html,
 * which then pointed at whatever host the request line named.
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

/** True when the target, once in origin-form, is a path (or `*` for OPTIONS, RFC 9112 3.2.4). */
export function isOriginForm ({ url, method }: FastifyRequest): boolean {
  return url.charCodeAt(0) === 47 || (url === '*' && method === 'OPTIONS')
}

/**
 * Any other target that is not a path (`plants`, `*health`; `*` but for OPTIONS) is
 * answered 400: the router (find-my-way before 9.10.2) made `*health` the health check.
 */
export function requireOriginForm (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  done(isOriginForm(request) ? undefined : new TargetInvalid())
}
