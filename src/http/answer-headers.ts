import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * OWASP REST security headers for JSON answers. Not @fastify/helmet: it rebuilds its
 * middleware per request, a heavy cost on the API; the docs pages use helmet instead.
 */
export const apiSecurityHeaders: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'strict-transport-security': 'max-age=31536000; includeSubDomains'
}

/** The headers every API answer carries, errors included: its request id and the security headers. */
export function setAnswerHeaders (request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id).headers(apiSecurityHeaders)
}
