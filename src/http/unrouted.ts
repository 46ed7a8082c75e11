import type { FastifyRequest } from 'fastify'
import { echo } from './error-handler.ts'
import { MethodNotAllowed, RouteNotFound, withHeaders } from './errors.ts'
import type { RouteMethods } from './route-methods.ts'

/** Answers the requests that reach Fastify's not-found handler all the same (a docs file that is not there). */
export function notFoundHandler (routes: RouteMethods) {
  return (request: FastifyRequest): never => { throw unrouted(request, routes) }
}

/** The refusal of an unrouted request: 405 with `Allow` when its path takes other methods, else 404. */
export function unrouted (request: FastifyRequest, routes: RouteMethods): Error {
  const path = request.url.split('?', 1)[0]
  const allowed = routes.allowed(path)
  // A route with this very method that found nothing (a missing docs file) is a 404.
  if (allowed.length === 0 || allowed.includes(request.method)) return new RouteNotFound(request.method, echo(path))
  return withHeaders(new MethodNotAllowed(echo(request.method), echo(path), allowed.join(', ')), { allow: allowed.join(', ') })
}
