import type { FastifyRequest } from 'fastify'

/** The operation a request was routed to, as the document writes it: `GET /plants/{id}`. */
export function operationOf (request: FastifyRequest): string {
  return operationName(request.method, request.routeOptions.url ?? '')
}

export function operationName (method: string, url: string): string {
  return `${method} ${url.replace(/:(\w+)/g, '{$1}')}`
}
