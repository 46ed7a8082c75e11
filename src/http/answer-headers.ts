import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import helmet from 'helmet'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A page a browser renders (Swagger UI): it takes helmet's headers instead of the API's. */
    page?: boolean
  }
}

/**
 * OWASP REST security headers for JSON answers: a constant object, since building helmet's
 * middleware for each request is a heavy cost on the API.
 */
export const apiSecurityHeaders: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin'
}

/**
 * helmet's headers for the rendered pages, taken once from its middleware, without
 * upgrade-insecure-requests, which behind plain HTTP would send "Try it out" to https; HSTS
 * as on every answer.
 */
const pageSecurityHeaders: Readonly<Record<string, string>> = headersOf(helmet({
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
  strictTransportSecurity: false
}))

/**
 * HSTS, on answers to requests that came over HTTPS only (RFC 6797 section 7.2): the
 * service speaks plain HTTP, so that is what a proxy in TRUST_PROXY says with X-Forwarded-Proto.
 */
const STRICT_TRANSPORT_SECURITY = 'max-age=31536000; includeSubDomains'

/** The one place answer headers are set: every answer's request id, and the security headers for what it is. */
export function setAnswerHeaders (request: FastifyRequest, reply: FastifyReply, page = false): void {
  reply.header('x-request-id', request.id).headers(page ? pageSecurityHeaders : apiSecurityHeaders)
  if (request.protocol === 'https') reply.header('strict-transport-security', STRICT_TRANSPORT_SECURITY)
}

type Middleware = (request: IncomingMessage, response: ServerResponse, next: () => void) => void

// helmet's policy has no per-request part here (no nonces): what it sets once, it sets always.
function headersOf (middleware: Middleware): Record<string, string> {
  const headers: Record<string, string> = {}
  const recorder = { setHeader: (name: string, value: string) => { headers[name.toLowerCase()] = value }, removeHeader: () => {} }
  middleware({} as IncomingMessage, recorder as unknown as ServerResponse, () => {})
  return headers
}
