import type { FastifyReply, FastifyRequest } from 'fastify'
import { UnknownParameter, withDetails } from './errors.ts'
import { operationOf } from './operation.ts'

// A request names at most this many of the parameters it should not have sent.
const MAX_NAMED = 10
const MAX_NAME_LENGTH = 40

/**
 * A query parameter the route does not take is refused, not ignored: `?page=2` on a
 * route that pages by `after` would otherwise answer the first page again, for ever.
 */
export function refuseUnknownQuery (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const known = (request.routeOptions.schema?.querystring as { properties?: object } | undefined)?.properties ?? {}
  const unknown = Object.keys(request.query as object).filter((name) => !Object.hasOwn(known, name))
  if (unknown.length === 0) return done()
  const takes = Object.keys(known)
  const offer = takes.length === 0 ? 'takes no query parameters' : `takes only ${takes.join(', ')}`
  const named = unknown.slice(0, MAX_NAMED).map(shorten)
  const message = `${operationOf(request)} ${offer}; unknown: ${named.join(', ')}${unknown.length > MAX_NAMED ? ', …' : ''}`
  done(withDetails(new UnknownParameter(message), named.map((name) => ({
    field: `querystring/${name}`,
    message: `is not a parameter of this operation, which ${offer}`
  }))))
}

function shorten (name: string): string {
  return name.length > MAX_NAME_LENGTH ? `${name.slice(0, MAX_NAME_LENGTH)}…` : name
}
