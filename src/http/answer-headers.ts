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
  'cross-origin-resource-policy': 'same-origin'
}

/**
 * HSTS, on answers to requests that came over HTTPS only (RFC 6797 section 7.2): the
 * service speaks plain HTTP, so that is what a proxy in TRUST_PROXY says with X-Forwarded-Proto.
 */
export const STRICT_TRANSPORT_SECURITY = 'max-age=31536000; includeSubDomains'

/** The headers every answer carries, errors included: its request id and the security headers. */
export function setAnswerHeaders (request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id).headers(apiSecurityHeaders)
  if (request.protocol === 'https') reply.header('strict-transport-security', STRICT_TRANSPORT_SECURITY)
}
