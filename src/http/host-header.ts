import type { FastifyReply, FastifyRequest } from 'fastify'
import { HostMissing } from './errors.js'

/**
 * An HTTP/1.1 request without a Host header is answered 400 (RFC 9112, 3.2). Node does
 * that itself unless told not to (`requireHostHeader`), with no body at all; checked
 * here instead, it is an Error like every other 400.
 */
export function requireHost (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const { headers, httpVersionMajor, httpVersionMinor } = request.raw
  done(headers.host === undefined && httpVersionMajor === 1 && httpVersionMinor === 1 ? new HostMissing() : undefined)
}
