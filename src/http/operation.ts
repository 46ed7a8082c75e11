import type { FastifyRequest } from 'fastify'

/** The operation a request was routed to, as the document writes it: `GET /plants/{id}`. */
export function operationOf (request: FastifyRequest): string {
  return `${request.method} ${request.routeOptions.url?.replace(/:(\w+)/g, '{$1}')}`
}
