import FindMyWay from 'find-my-way'

const METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'] as const

/**
 * A second router holding only which methods each route has, so that a request Fastify
 * found no route for can be told apart: a path that exists with other methods (405 and
 * `Allow`) from one that does not (404). Built with the app's own router options, so it
 * matches paths exactly as Fastify does.
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
      if (!this.#router.hasRoute(method as FindMyWay.HTTPMethod, url)) this.#router.on(method as FindMyWay.HTTPMethod, url, () => {})
    }
  }

  /** The methods the path has, in alphabetical order; none when no route has it. */
  allowed (path: string): string[] {
    return METHODS.filter((method) => this.#router.find(method, path) !== null)
  }
}
