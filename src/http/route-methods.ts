import type { FastifyRequest } from 'fastify'
import FindMyWay from 'find-my-way'
import { echo } from './error-handler.ts'
import { MethodNotAllowed, RouteNotFound, withHeaders } from './errors.ts'

const METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'] as const

/**
 * A second router, with the app's options, holding each route's methods: tells an
 * unrouted request's 405 (with `Allow`) from its 404. A path is the resource of the route
 * that matches it most closely: `/plants/changes` is the feed's, never a plant's, though
 * `/plants/{id}` would match it for the methods the feed lacks.
 */
export class RouteMethods {
  readonly #router

  constructor (options: { ignoreTrailingSlash: boolean, maxParamLength: number }) {
    this.#router = FindMyWay({ ...options, ignoreDuplicateSlashes: false })
  }

  add (methods: string | string[], url: string): void {
    // A catch-all (the CORS preflight's OPTIONS *) says nothing of which paths exist.
    if (url === '*' || url === '/*') return
    for (const method of [methods].flat()) {
      if (!this.#router.hasRoute(method as FindMyWay.HTTPMethod, url)) this.#router.on(method as FindMyWay.HTTPMethod, url, () => {}, { url })
    }
  }

  /** The refusal of an unrouted request: 405 with `Allow` when its path takes other methods, else 404. */
  refusal (request: FastifyRequest): Error {
    const path = request.url.split('?', 1)[0]
    const allowed = this.allowed(path)
    // A route with this very method that found nothing (a missing docs file) is a 404.
    if (allowed.length === 0 || allowed.includes(request.method)) return new RouteNotFound(request.method, echo(path))
    return withHeaders(new MethodNotAllowed(echo(request.method), echo(path), allowed.join(', ')), { allow: allowed.join(', ') })
  }

  /** Fastify's not-found handler: the requests that reach it all the same (a docs file that is not there) are refused alike. */
  readonly notFoundHandler = (request: FastifyRequest): never => { throw this.refusal(request) }

  /** The methods of the path's resource, in alphabetical order; none when no route has it. */
  allowed (path: string): string[] {
    const routes = METHODS.map((method) => (this.#router.find(method, path)?.store as { url: string } | undefined)?.url)
    const closest = routes.reduce<string | undefined>((best, url) => url === undefined || (best !== undefined && parameters(best) <= parameters(url)) ? best : url, undefined)
    return METHODS.filter((_, i) => routes[i] === closest && closest !== undefined)
  }
}

/** How many parts of a route's path are parameters or wildcards: the fewer, the closer it matches. */
function parameters (url: string): number {
  return url.split('/').filter((part) => part.startsWith(':') || part.includes('*')).length
}
