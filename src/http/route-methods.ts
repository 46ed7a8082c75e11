import FindMyWay from 'find-my-way'

const METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'] as const

/**
 * A second router, with the app's options, holding each route's methods: tells an
 * unrouted request's 405 (with `Allow`) from its 404.
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
