import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * Security headers for JSON answers: they load nothing and are framed nowhere (the OWASP
 * REST security headers). Not @fastify/helmet here: it rebuilds its middleware on every
 * request, which halved the API's throughput. The docs pages, where a policy matters to
 * a browser, drop these and take @fastify/helmet's instead.
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
